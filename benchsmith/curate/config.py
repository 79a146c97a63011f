"""Settings of a curation run: each stage's own settings, plus the one LLM client's.

They come from the ``curate:`` block of ``params.yaml`` (each stage reads its ``params_key``
sub-block, or, for ``params_key = None``, its fields directly under ``curate:``), then from the
stages' command-line flags. Every field is hashed into the output's ``params_hash``
(:meth:`CurateConfig.hashable`), so two curated datasets with the same hash came from the same
settings. Paths (judge files, corpus, verdicts) are hashed by content separately in
``build_info.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.schema import Block, ListOf
from benchsmith.core.settings import (
    check_settings,
    declared,
    paths_as_paths,
    setting,
    settings_block,
    settings_from,
)
from benchsmith.core.urls import without_credentials
from benchsmith.stages import STAGES
from benchsmith.stages.base import Stage, plain

TARGETS_KEY = "targets"  # the datasets `benchsmith curate --targets` runs: a list of them


@dataclass(frozen=True)
class CurateTarget:
    """One entry of ``curate.targets``: a published config the ``curate`` DVC stage
    (``benchsmith curate --targets``) curates; ``settings`` (a ``curate:`` block of its own)
    overrides any curation setting for this target alone."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "dataset", "config")

    name: str | None = setting(None, "the target's name (required): its folder under the "
                               "curate stage's --out and its line in the metrics", flag=False)  # fmt: skip
    dataset: Path | None = setting(None, "the published dataset folder (required)", flag=False)
    config: str | None = setting(None, "the config of that dataset to curate (required)",
                                 flag=False)  # fmt: skip
    split: str = setting("test", "the split to curate", flag=False)
    out: Path | None = setting(None, "where the curated dataset goes (null: OUT/<name>)",
                               flag=False)  # fmt: skip

    def __post_init__(self) -> None:
        paths_as_paths(self)


@dataclass(frozen=True)
class LLMSettings:
    """The LLM client of the review and text-only stages (``curate.llm``). The API key is read
    from ``OPENAI_API_KEY`` only, never from a file or a flag."""

    base_url: str | None = setting(
        None, "OpenAI-compatible endpoint (null: OPENAI_BASE_URL)", metavar="URL"
    )
    concurrency: int = setting(4, "requests in flight at once", minimum=1, metavar="N",
                               shapes_output=False)  # fmt: skip
    cache_dir: Path = setting(
        Path(".benchsmith/llm-cache"), "the answer cache: a rerun asks only what it lacks",
        metavar="DIR", aliases=("--llm-cache",), shapes_output=False,
    )  # fmt: skip
    timeout_s: float = setting(60.0, "seconds to wait for one answer", minimum=0, metavar="S")
    max_retries: int = setting(5, "tries after a failed one (429, 5xx, timeouts, junk)",
                               minimum=0, metavar="N")  # fmt: skip
    retry_wait_s: float = setting(
        0.5, "seconds before the first retry, doubled on each further one (at most 20 s); a "
        "server's Retry-After wins", minimum=0, metavar="S", shapes_output=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        paths_as_paths(self)
        check_settings(self, "curate.llm")


# settings blocks declared for curation, for the params reference
# (scripts/make_params_reference.py): each stage's (final_draw's fields sit under curate: itself)
DECLARED_BLOCKS = {
    **{
        ("curate",)
        if stage.params_key is None
        else ("curate", stage.params_key): stage.settings_type
        for stage in STAGES
    },
    ("curate", "llm"): LLMSettings,
    ("curate", "targets[]"): CurateTarget,  # each entry of the list
}


@dataclass(frozen=True)
class CurateConfig:
    """Settings per stage name, plus the LLM client's."""

    stages: dict[str, Any] = field(default_factory=dict)
    llm: LLMSettings = field(default_factory=LLMSettings)

    def of(self, stage: Stage) -> Any:
        return self.stages[stage.name]

    @property
    def seed(self) -> int:
        """The run's seed (the final draw's), recorded in provenance and the card."""
        return int(next(s.seed for s in self.stages.values() if hasattr(s, "seed")))

    def hashable(self) -> dict[str, Any]:
        """Settings as plain JSON in their params layout, for the params hash and the card;
        a stage's ``run_only`` settings (workers, executor) are left out: they change no byte."""
        data: dict[str, Any] = {}
        for stage in STAGES:
            values = plain(self.stages[stage.name])
            for name in stage.run_only:
                values.pop(name, None)
            if stage.params_key is None:
                data.update(values)
            else:
                data[stage.params_key] = values
        llm = plain(self.llm)
        llm.pop("cache_dir", None)  # where the cache lives does not change answers
        llm.pop("retry_wait_s", None)  # nor does the pause before a retry (how many: kept)
        llm["base_url"] = without_credentials(llm.get("base_url"))  # build_info is uploaded
        data["llm"] = llm
        return data

    def with_flags(self, flags: Mapping[str, Any]) -> CurateConfig:
        """The command-line flags of every stage (and of the LLM client) applied on top
        (``flags``: the parsed command line by destination, ``vars(args)``)."""
        stages = {s.name: s.override(self.stages[s.name], flags) for s in STAGES}
        given = {name: flags[name] for name in declared(LLMSettings) if flags.get(name) is not None}
        llm = dataclasses.replace(self.llm, **given) if given else self.llm
        return CurateConfig(stages, llm)


def top_level_keys() -> set[str]:
    keys = {TARGETS_KEY, "llm"}
    for stage in STAGES:
        if stage.params_key is None:
            keys.update(f.name for f in dataclasses.fields(stage.settings_type))
        else:
            keys.add(stage.params_key)
    return keys


def params_schema() -> Block:
    """The ``curate:`` block: each stage's settings (from its settings dataclass, plus the
    choices it declares), the LLM client's, and ``targets`` (each may override any setting)."""
    fields: dict[str, Any] = {}
    for stage in STAGES:
        block = settings_block(stage.settings_type)
        if stage.params_key is None:
            fields.update(block.fields)
        else:
            fields[stage.params_key] = block
    fields["llm"] = settings_block(LLMSettings)
    target = Block({**settings_block(CurateTarget).fields, "settings": Block(dict(fields))})
    fields[TARGETS_KEY] = ListOf(target, nullable=True)
    return Block(fields)


def config_from_params(section: dict[str, Any] | None) -> CurateConfig:
    """Build from the ``curate:`` block of params.yaml; unknown keys are an error, not ignored."""
    section = dict(section or {})
    unknown = set(section) - top_level_keys()
    if unknown:
        raise BenchsmithError(
            f"unknown curate setting(s): {', '.join(sorted(unknown))}",
            path="params.yaml",
            fix=f"valid keys: {', '.join(sorted(top_level_keys()))}",
        )
    stages = {}
    for stage in STAGES:
        if stage.params_key is None:
            names = {f.name for f in dataclasses.fields(stage.settings_type)}
            block = {k: v for k, v in section.items() if k in names}
        else:
            block = section.get(stage.params_key)
        stages[stage.name] = stage.settings_from(block)
    llm_block = section.get("llm") or {}
    unknown_llm = set(llm_block) - set(declared(LLMSettings))
    if unknown_llm:
        raise BenchsmithError(
            f"unknown curate.llm settings: {', '.join(sorted(unknown_llm))}",
            path="params.yaml",
            fix=f"valid keys: {', '.join(declared(LLMSettings))}",
        )
    llm = settings_from(LLMSettings, llm_block)
    return CurateConfig(stages, llm)
