"""Stage ``final_draw``: a target number of samples per subtask, proportional by difficulty.

The paper "proportionally samples 1200 samples ... based on their difficulty levels" and keeps
everything when fewer remain (spec §2 step 5) but publishes no sampler or seed. Here each
subtask's target is split over its strata (difficulty bins) by largest-remainder rounding, and
each stratum is drawn with its own generator derived from ``(seed, "curate",
"draw/<subtask>/<stratum>")`` over the *sorted* ids. The result therefore depends only on the
seed and the set of ids, never on input order (ARCHITECTURE.md contract 1), and changing one
stratum leaves the draws of every other stratum unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.rng import derived_rng
from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageDecision, StageResult

RNG_FAMILY = "curate"


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BenchsmithError(
            f"{what} must be a non-negative integer, got {value!r}",
            fix="use whole sample counts",
        )
    return value


def largest_remainder_allocation(counts: Mapping[str, int], target: int) -> dict[str, int]:
    """Split ``target`` over strata in proportion to ``counts`` (Hamilton's method).

    Each stratum gets ``floor(target * count / total)``; the seats left go one each to the
    largest fractional parts, ties broken by stratum name. Exact integer arithmetic, so shares
    are within 1 of proportional, sum to ``target`` and never exceed a stratum's count. When
    ``target >= total`` every stratum keeps everything.
    """
    _check_count(target, "target")
    for name, count in counts.items():
        _check_count(count, f"count of stratum {name!r}")
    total = sum(counts.values())
    if target >= total:
        return {name: counts[name] for name in sorted(counts)}
    floors = {name: target * counts[name] // total for name in counts}
    remainders = {name: target * counts[name] % total for name in counts}
    left = target - sum(floors.values())
    for name in sorted(counts, key=lambda n: (-remainders[n], n))[:left]:
        floors[name] += 1
    return {name: floors[name] for name in sorted(counts)}


def _target_for(target_per_subtask: int | Mapping[str, int], subtask: str) -> int:
    if isinstance(target_per_subtask, Mapping):
        if subtask not in target_per_subtask:
            raise BenchsmithError(
                f"no draw target for subtask {subtask!r}",
                fix=f"add {subtask!r} to the per-subtask targets (or give one target for all)",
            )
        return _check_count(target_per_subtask[subtask], f"target of subtask {subtask!r}")
    return _check_count(target_per_subtask, "target_per_subtask")


def _check_unique(pool: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
    """Every sample id appears once in the whole pool, so the result set loses nothing."""
    seen: dict[str, tuple[str, str]] = {}
    for subtask in sorted(pool):
        for stratum in sorted(pool[subtask]):
            for sample_id in pool[subtask][stratum]:
                if sample_id in seen:
                    first = "/".join(seen[sample_id])
                    raise BenchsmithError(
                        f"sample id {sample_id!r} is in {first} and {subtask}/{stratum}",
                        fix="give each sample exactly one subtask and one stratum",
                    )
                seen[sample_id] = (subtask, stratum)


def plan_allocations(
    pool: Mapping[str, Mapping[str, Sequence[str]]], target_per_subtask: int | Mapping[str, int]
) -> dict[str, dict[str, int]]:
    """How many samples each (subtask, stratum) contributes: for manifests and the draw."""
    return {
        subtask: largest_remainder_allocation(
            {stratum: len(ids) for stratum, ids in pool[subtask].items()},
            _target_for(target_per_subtask, subtask),
        )
        for subtask in sorted(pool)
    }


def draw_stratum(ids: Sequence[str], k: int, seed: int, subtask: str, stratum: str) -> list[str]:
    """``k`` ids chosen without replacement, sorted; independent of the order of ``ids``."""
    ordered = sorted(ids)
    if k >= len(ordered):
        return ordered
    rng = derived_rng(seed, RNG_FAMILY, f"draw/{subtask}/{stratum}")
    picks = rng.choice(len(ordered), size=k, replace=False)
    return sorted(ordered[i] for i in picks)


def stratified_draw(
    pool: Mapping[str, Mapping[str, Sequence[str]]],
    target_per_subtask: int | Mapping[str, int],
    seed: int,
) -> set[str]:
    """Sample ids kept by the draw: ``pool`` is ``{subtask: {stratum: [sample_id, ...]}}``.

    Each subtask yields exactly its target, or its whole pool when the pool is smaller.
    """
    _check_unique(pool)
    allocations = plan_allocations(pool, target_per_subtask)
    selected: set[str] = set()
    for subtask, allocation in allocations.items():
        for stratum, k in allocation.items():
            selected.update(draw_stratum(pool[subtask][stratum], k, seed, subtask, stratum))
    return selected


@dataclass(frozen=True)
class DrawSettings:
    target_size: int | None = setting(
        None, "samples per subtask (null: keep every survivor)", minimum=1
    )
    seed: int = setting(0, "seed of the draw")


class FinalDrawStage(Stage):
    name = "final_draw"
    title = "Final draw"
    summary = "--target-size per subtask, stratified by difficulty, seeded."
    params_key = None  # `curate.target_size` and `curate.seed`
    settings_type = DrawSettings
    reasons = {"NOT_SAMPLED": "survived every filter but was not drawn for the target size"}
    card_section = """\
## Final draw

Target {{ report.target_size }} samples per subtask, stratified by difficulty
(largest-remainder rounding, seed {{ report.seed }}); a smaller pool is kept whole.

| subtask | allocation |
|---|---|
{% for subtask, alloc in report.allocation.items() -%}
| `{{ subtask }}` | {% for b, n in alloc.items() %}{{ b }} {{ n }}{% if not loop.last %}, {% endif %}{% endfor %} |
{% endfor %}
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: DrawSettings, context: StageContext
    ) -> str | None:
        if settings.target_size is None:
            return "no target size (every survivor kept)"
        return None

    def run(
        self, samples: Sequence[Any], settings: DrawSettings, context: StageContext
    ) -> StageResult:
        pool: dict[str, dict[str, list[str]]] = {}
        for s in samples:
            stratum = context.difficulty.get(s.sample_id, ("unrated", -1))[0]
            pool.setdefault(s.subtask, {}).setdefault(stratum, []).append(s.sample_id)
        chosen = stratified_draw(pool, settings.target_size, settings.seed)
        allocation = plan_allocations(pool, settings.target_size)
        decisions = {
            s.sample_id: StageDecision(
                s.sample_id, "drop", "NOT_SAMPLED", {"subtask": s.subtask, "seed": settings.seed}
            )
            for s in samples
            if s.sample_id not in chosen
        }
        report = {
            "target_size": settings.target_size,
            "seed": settings.seed,
            "allocation": allocation,
        }
        return StageResult(decisions, report)


FINAL_DRAW = FinalDrawStage()
