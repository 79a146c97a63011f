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
from benchsmith.core.settings import (
    check_settings,
    nulls_as_defaults,
    paths_as_paths,
    setting,
    settings_from,
)
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

    apply_to: str = setting(
        "crawled", "whose questions cleaning may rewrite (flags are always recorded): crawled, "
        "all (the release too) or none", choices=APPLY_TO, flag=False,
    )  # fmt: skip
    remove_hints: bool = setting(
        True, 'remove hints that give the answer\'s form away ("(注意：多选)", "<多选>", '
        '"【提示】...")', flag=False,
    )  # fmt: skip
    split_parallel_blanks: bool = setting(
        True, "split parallel blanks (①...[MASK]；②...[MASK]) into one question per part",
        flag=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "multi.cleaning")


@dataclass(frozen=True)
class NearDuplicates:
    """Near-duplicate removal (``multi.near_duplicates``): candidates from character n-grams
    (exact prefix filtering, or MinHash LSH with ``num_perm`` hashes in ``bands`` bands),
    confirmed by exact n-gram Jaccard
    >= ``min_jaccard`` (of the full texts, or of stems at least ``min_stem_chars`` long whose
    answers agree) and images pairwise within ``image_bits`` pHash bits (or both questions
    without images)."""

    enabled: bool = setting(True, "remove near-duplicate questions across every source", flag=False)
    ngram: int = setting(
        3, "character n-grams of the normalised text", minimum=1, maximum=8, flag=False
    )
    candidates: str = setting(
        "exact", "how candidate pairs are found: exact (prefix filtering, every pair at "
        "min_jaccard found, and faster on exam text) or lsh (MinHash bands: num_perm, bands; "
        "a pair at Jaccard 0.6 found with probability 0.99)", choices=("exact", "lsh"),
        flag=False,
    )  # fmt: skip
    num_perm: int = setting(128, "MinHash hashes per question (candidates: lsh)", minimum=8,
                            maximum=1024, flag=False)  # fmt: skip
    bands: int = setting(
        32, "LSH bands of num_perm/bands hashes each (32 bands of 4: a pair at Jaccard 0.6 is a "
        "candidate with probability 0.99); must divide num_perm", minimum=1, maximum=512, flag=False,
    )  # fmt: skip
    min_jaccard: float = setting(
        0.6, "n-gram Jaccard that confirms a candidate pair (full texts, or stems; above 0: "
        "at 0 every pair of questions would be one)", minimum=0.01, maximum=1.0, flag=False,
    )  # fmt: skip
    image_bits: int = setting(
        8, "pHash bits within which the pair's images must agree", minimum=0, maximum=32,
        flag=False,
    )  # fmt: skip
    min_stem_chars: int = setting(
        12, "normalised characters a stem needs to match on its own (answers agreeing)",
        minimum=1, flag=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "multi.near_duplicates")


@dataclass(frozen=True)
class Selection:
    """Appendix D (``multi.selection``): knowledge buckets, content score, quotas."""

    apply_to: str = setting(
        "crawled", "whose questions the selection draws from (the release is already the "
        "authors' selection): crawled, all or none", choices=APPLY_TO, flag=False,
    )  # fmt: skip
    p: float = setting(
        0.5, "Appendix D's keep probability p (the paper leaves it open)", minimum=0.0,
        maximum=1.0, flag=False,
    )  # fmt: skip
    m: int = setting(1, "Appendix D's head/tail width m (the paper leaves it open)", minimum=0,
                     flag=False)  # fmt: skip
    h_form: str = setting(
        "harmonic", "content-score normaliser H: harmonic L*Lbar/(L+Lbar) or ratio "
        "2*L*Lbar/(L^2+Lbar^2) (the paper prints both)", choices=H_FORMS, flag=False,
    )  # fmt: skip
    weights: tuple[float, float, float] = setting(
        (1.0, 0.1, 0.5), "weights of the question, answer and analysis lengths", minimum=0.0,
        flag=False,
    )  # fmt: skip
    a: float = setting(1.0, "weight of the character count", minimum=0.0, flag=False)
    b: float = setting(1.0, "weight of the image count", minimum=0.0, flag=False)

    def __post_init__(self) -> None:
        if not isinstance(self.weights, tuple | list) or len(self.weights) != 3:
            raise _error("selection.weights", "give three weights: question, answer, analysis")
        object.__setattr__(self, "weights", tuple(float(w) for w in self.weights))
        check_settings(self, "multi.selection")


@dataclass(frozen=True)
class Elite:
    """Which questions are Elite (``multi.elite``): the release's hard list as published, a hard
    list file (e.g. from ``build multi elite``), or none."""

    mode: str = setting(
        "published", "published (the release's hard list), file (hard_list) or none",
        choices=ELITE_MODES, flag=False,
    )  # fmt: skip
    hard_list: str | None = setting(
        None, "a hard list from `benchsmith build multi elite`, for mode: file",
        metavar="FILE", flag=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "multi.elite")


@dataclass(frozen=True)
class MultiPlanSettings:
    """The top of ``multi:``: the seed of the questions and select steps."""

    seed: int | None = setting(None, "build seed (null: the top-level seed)", minimum=0,
                               metavar="S")  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "multi")


@dataclass(frozen=True)
class MultiSourceFolders:
    """Where MULTI reads (``multi.sources``; ``data/sources/exams`` is written by the exams
    source stage): the ``ocr`` step reads ``exams``, the ``questions`` step ``release``."""

    exams: Path | None = setting(
        Path("data/sources/exams"), "exams folder with html/ and pages/ (and release/)",
        metavar="DIR",
    )  # fmt: skip
    release: Path | None = setting(
        None, "the unzipped MULTI release (null: EXAMS/release)", metavar="DIR"
    )

    def __post_init__(self) -> None:
        nulls_as_defaults(self)
        paths_as_paths(self)
        check_settings(self, "multi.sources")


SETTINGS_BLOCKS = {"cleaning": Cleaning, "near_duplicates": NearDuplicates,
                   "selection": Selection, "elite": Elite}  # fmt: skip


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
    for key, kind in SETTINGS_BLOCKS.items():
        parts[key] = settings_from(kind, data.get(key) or {})
    config = MultiConfig(seed=int(data.get("seed") or 0), **parts)
    check_config(config)
    return config


def check_config(config: MultiConfig) -> None:
    """What one block's declarations cannot say: settings that must agree with each other."""
    if config.near_duplicates.num_perm % config.near_duplicates.bands:
        raise _error("near_duplicates.bands", "must divide near_duplicates.num_perm")
    if config.elite.mode == "file" and not config.elite.hard_list:
        raise _error("elite.hard_list", "mode `file` needs the hard list's path")
