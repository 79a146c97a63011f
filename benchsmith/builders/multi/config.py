"""MULTI build settings (the ``multi:`` block of ``params.yaml``) and the fixed vocabularies.

The paper leaves several choices open (spec section 1 and 3); each is a field here with the
value we fixed and why, so a run records exactly what it did:

- the content-score normaliser ``H`` of Appendix D has two printed forms that disagree;
  ``harmonic`` (``L*Lbar/(L+Lbar)``, the first form) is the default, ``ratio``
  (``2*L*Lbar/(L^2+Lbar^2)``) the second;
- the keep probability ``p`` and the head/tail width ``m`` are never given: 0.5 and 1;
- cleaning that rewrites a question (hint removal, parallel blank split) applies to crawled
  problems by default; the official release was cleaned by its annotators, so its questions keep
  their ids and texts and only get flags (``cleaning.apply_to: all`` rewrites them too).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import executor_setting, workers_setting
from benchsmith.core.settings import check_settings, setting
from benchsmith.images.ocr_engines import BACKENDS, DEFAULT_BACKEND

QUESTION_TYPES = ("SA", "MA", "FB", "OP", "Other")
TYPE_NAMES = {"单选": "SA", "多选": "MA", "填空": "FB", "解答": "OP", "其他": "Other"}
EDUCATION = ("JuH", "SeH", "Uni", "Society")
EDUCATION_NAMES = {"初中": "JuH", "高中": "SeH", "大学": "Uni", "社会": "Society",
                   "驾考": "Society", "行测": "Society"}  # fmt: skip
TRACKS = ("School", "Driving", "AAT")
SOCIETY_TRACKS = {"驾考": "Driving", "行测": "AAT"}
LEVELS = ("JuH", "SeH", "Uni", "Driving", "AAT")  # the paper's reporting groups
IMAGE_CLASSES = ("NI", "SI", "MI")
SOURCE_KINDS = ("release", "html", "scan")
APPLY_TO = ("crawled", "all", "none")
H_FORMS = ("harmonic", "ratio")
ELITE_MODES = ("published", "file", "none")


def _error(key: str, message: str) -> BenchsmithError:
    return BenchsmithError(
        f"multi.{key}: {message}", path="params.yaml", fix=f"correct multi.{key}"
    )


@dataclass(frozen=True)
class OcrSettings:
    """How the ``ocr`` step reads the exam sources (``multi.ocr``): the engine that reads the
    scanned pages, where the pages are read, the cache that keeps every page read once, and the
    largest crawled table kept. Each setting is declared once, here: the params schema, the
    ``build multi ocr`` flags and the params reference are read from it."""

    backend: str = setting(
        DEFAULT_BACKEND, "OCR engine: rapidocr (models in its wheel), tesseract (the system "
        "program and its chi_sim data) or easyocr (the extra and your weights)", choices=BACKENDS,
    )  # fmt: skip
    workers: int = workers_setting(1, "OCR processes")
    executor: str = executor_setting("pages are read")
    cache_dir: Path = setting(
        Path(".benchsmith/ocr-cache"), "OCR cache by page sha256 and engine identity: no page "
        "is read twice", metavar="DIR", shapes_output=False, aliases=("--cache",),
    )  # fmt: skip
    max_table_cells: int = setting(
        10_000, "a crawled table's grid cells after its spans, at most: a bigger table skips "
        "its page", minimum=1, metavar="N",
    )  # fmt: skip

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache_dir", Path(self.cache_dir))  # a flag or YAML gives a str
        check_settings(self, "multi.ocr")


@dataclass(frozen=True)
class Cleaning:
    """What the paper's annotation and post-processing rounds fix (``multi.cleaning``)."""

    apply_to: str = "crawled"  # which problems may be rewritten (flags are always recorded)
    remove_hints: bool = True  # "(注意：多选)", "<多选>", "【提示】..." give the type away
    split_parallel_blanks: bool = True  # ①...[MASK]；②...[MASK] become one question each


@dataclass(frozen=True)
class NearDuplicates:
    """Near-duplicate removal (``multi.near_duplicates``): MinHash LSH over character n-grams
    (``num_perm`` hashes in ``bands`` bands) for candidates, confirmed by exact n-gram Jaccard
    >= ``min_jaccard`` (of the full texts, or of stems at least ``min_stem_chars`` long whose
    answers agree) and images pairwise within ``image_bits`` pHash bits (or both questions
    without images)."""

    enabled: bool = True
    ngram: int = 3
    num_perm: int = 128
    bands: int = 32
    min_jaccard: float = 0.6
    image_bits: int = 8
    min_stem_chars: int = 12  # a stem this long (normalised characters) can match on its own


@dataclass(frozen=True)
class Selection:
    """Appendix D (``multi.selection``): knowledge buckets, content score, quotas."""

    apply_to: str = "crawled"
    p: float = 0.5
    m: int = 1
    h_form: str = "harmonic"
    weights: tuple[float, float, float] = (1.0, 0.1, 0.5)  # question, answer, analysis
    a: float = 1.0  # weight of the character count
    b: float = 1.0  # weight of the image count


@dataclass(frozen=True)
class Elite:
    """Which questions are Elite (``multi.elite``): the release's hard list as published, a hard
    list file (e.g. from ``build multi elite``), or none."""

    mode: str = "published"
    hard_list: str | None = None


@dataclass(frozen=True)
class MultiConfig:
    seed: int = 0
    cleaning: Cleaning = field(default_factory=Cleaning)
    near_duplicates: NearDuplicates = field(default_factory=NearDuplicates)
    selection: Selection = field(default_factory=Selection)
    elite: Elite = field(default_factory=Elite)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["selection"]["weights"] = list(self.selection.weights)
        return out

    @classmethod
    def from_params(cls, settings: dict[str, Any], seed: int | None) -> MultiConfig:
        config = config_from_dict({k: v for k, v in settings.items()
                                   if k in ("cleaning", "near_duplicates", "selection", "elite")})  # fmt: skip
        return replace(config, seed=int(seed or 0))


def config_from_dict(data: dict[str, Any]) -> MultiConfig:
    """The config a plan recorded (``as_dict``), or a ``multi:`` block, back as dataclasses."""
    parts: dict[str, Any] = {}
    for key, kind in (("cleaning", Cleaning), ("near_duplicates", NearDuplicates),
                      ("selection", Selection), ("elite", Elite)):  # fmt: skip
        values = dict(data.get(key) or {})
        if "weights" in values:
            values["weights"] = tuple(float(w) for w in values["weights"])
            if len(values["weights"]) != 3:
                raise _error("selection.weights", "give three weights: question, answer, analysis")
        parts[key] = kind(**values)
    config = MultiConfig(seed=int(data.get("seed") or 0), **parts)
    check_config(config)
    return config


def check_config(config: MultiConfig) -> None:
    if config.cleaning.apply_to not in APPLY_TO:
        raise _error("cleaning.apply_to", f"one of {APPLY_TO}")
    if config.selection.apply_to not in APPLY_TO:
        raise _error("selection.apply_to", f"one of {APPLY_TO}")
    if config.selection.h_form not in H_FORMS:
        raise _error("selection.h_form", f"one of {H_FORMS}")
    if not 0 <= config.selection.p <= 1:
        raise _error("selection.p", "a probability from 0 to 1")
    if config.near_duplicates.num_perm % config.near_duplicates.bands:
        raise _error("near_duplicates.bands", "must divide near_duplicates.num_perm")
    if config.elite.mode not in ELITE_MODES:
        raise _error("elite.mode", f"one of {ELITE_MODES}")
    if config.elite.mode == "file" and not config.elite.hard_list:
        raise _error("elite.hard_list", "mode `file` needs the hard list's path")
