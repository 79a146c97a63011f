"""Settings of a curation run, from ``params.yaml`` (``curate:``) overridden by CLI flags.

Every field is hashed into the output's ``params_hash``, so two curated datasets with the same
hash came from the same settings. Paths (judge files, corpus, verdicts) are hashed by content
separately in ``build_info.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError

STAGE_ORDER = (
    "difficulty",
    "zero_pass_review",
    "text_only",
    "blind_baselines",
    "image_duplicates",
    "ngram_overlap",
    "final_draw",
)


@dataclass(frozen=True)
class JudgeSettings:
    files: tuple[Path, ...] = ()
    metric: str = "accuracy"
    cutoff: float | None = None  # None: the metric's default from the LIME paper's table
    bins: str = "paper"  # "paper" | "code"
    drop_bins: tuple[str, ...] = ("easy",)
    missing_policy: str = "error"  # error | treat_wrong | exclude_model
    unknown_ids: str = "error"  # error | ignore


@dataclass(frozen=True)
class ReviewSettings:
    model: str | None = (
        None  # None: no LLM review (zero-pass samples are kept unless a human rejects)
    )
    detail: str = "high"
    human_verdicts: Path | None = None


@dataclass(frozen=True)
class TextOnlySettings:
    models: tuple[str, ...] = ()
    max_text_only_correct: int = 0
    max_tokens: int = 128


@dataclass(frozen=True)
class BlindSettings:
    enabled: bool = True
    threshold: float = 0.10  # flag a rule whose accuracy beats chance by more than this
    drop_flagged: bool = True


@dataclass(frozen=True)
class ImageSettings:
    enabled: bool = True
    near_threshold: int = 4  # phash Hamming distance counted as a near duplicate
    against_splits: tuple[str, ...] = ()  # e.g. ("support",) when curating "query"
    workers: int = 1


@dataclass(frozen=True)
class NgramSettings:
    corpus: tuple[Path, ...] = ()
    n: int = 8
    min_matches: int = 1
    text_field: str = "text"


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None
    concurrency: int = 4
    cache_dir: Path = Path(".benchsmith/llm-cache")
    timeout_s: float = 60.0
    max_retries: int = 5


@dataclass(frozen=True)
class CurateConfig:
    judges: JudgeSettings = field(default_factory=JudgeSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)
    text_only: TextOnlySettings = field(default_factory=TextOnlySettings)
    blind: BlindSettings = field(default_factory=BlindSettings)
    images: ImageSettings = field(default_factory=ImageSettings)
    ngram: NgramSettings = field(default_factory=NgramSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    target_size: int | None = None  # per subtask; None keeps every survivor
    seed: int = 0

    def hashable(self) -> dict[str, Any]:
        """Settings as plain JSON (paths as strings), for the params hash and the card."""

        def plain(value: Any) -> Any:
            if isinstance(value, Path):
                return value.as_posix()
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [plain(v) for v in value]
            return value

        data = plain(asdict(self))
        data["llm"].pop("cache_dir", None)  # where the cache lives does not change answers
        return data


_SECTIONS = {
    "judges": JudgeSettings,
    "review": ReviewSettings,
    "text_only": TextOnlySettings,
    "blind": BlindSettings,
    "images": ImageSettings,
    "ngram": NgramSettings,
    "llm": LLMSettings,
}
_SCALARS = ("target_size", "seed")
_PATH_FIELDS = {"files", "corpus", "human_verdicts", "cache_dir"}


def _coerce(name: str, value: Any, default: Any) -> Any:
    """YAML value -> field value. A list field also takes ``null`` (none) or one scalar (a
    one-item list), so ``against_splits: support`` is not read letter by letter."""
    if isinstance(default, tuple):
        items = () if value is None else value if isinstance(value, list | tuple) else (value,)
        return tuple(Path(v) if name in _PATH_FIELDS else v for v in items)
    if name in _PATH_FIELDS and value is not None:
        return Path(value)
    return value


def config_from_params(section: dict[str, Any] | None) -> CurateConfig:
    """Build from the ``curate:`` block of params.yaml; unknown keys are an error, not ignored."""
    section = dict(section or {})
    kwargs: dict[str, Any] = {}
    for key, value in section.items():
        if key in _SECTIONS:
            cls = _SECTIONS[key]
            known = set(cls.__dataclass_fields__)
            unknown = set(value or {}) - known
            if unknown:
                raise BenchsmithError(
                    f"unknown curate.{key} settings: {', '.join(sorted(unknown))}",
                    path="params.yaml",
                    fix=f"valid keys: {', '.join(sorted(known))}",
                )
            fields = cls.__dataclass_fields__
            kwargs[key] = cls(
                **{k: _coerce(k, v, fields[k].default) for k, v in (value or {}).items()}
            )
        elif key in _SCALARS:
            kwargs[key] = value
        elif key == "targets":
            continue  # the datasets `benchsmith curate --targets` runs, not a setting
        else:
            raise BenchsmithError(
                f"unknown curate setting {key!r}",
                path="params.yaml",
                fix=f"valid keys: {', '.join(sorted([*_SECTIONS, *_SCALARS, 'targets']))}",
            )
    return CurateConfig(**kwargs)
