"""``benchsmith build mmiu check``: the shortcut gate every config must pass before publish.

For every task of a plan it runs:

- the blind rules of :mod:`benchsmith.options.blind_rules` (answer-letter prior; longest,
  shortest, odd format, odd precision, odd file type, question overlap; and for numbers:
  closest to / farthest from the identity pose, most decimals, odd signature, the option in
  the middle of the others or farthest from them, smallest or largest);
- the image-aware, position and cross-item baselines of :mod:`.gate_signals` (each candidate's
  likeness to the reference views and its file size; a point's distance from REF's position and
  from the centre; the file size and texture of the pieces an order puts on top; how often an
  option recurs in other items; numbers' size and rounding), each as a pick-the-largest and a
  pick-the-smallest rule, and all of them in one learned options-only model (a conditional
  logit scored on held-out items: :mod:`benchsmith.options.cross_item_rules`), with the images
  rendered from the plan's sources;
- a text-only LLM (question, context and options, no image) when one is configured, through
  the one LLM client (cached; its replies read with MMIU's answer extraction);
- the option guarantees again (gold never a distractor, distinct options, one format per item,
  answer letters balanced by chi-square) and, for image options, one kind of image per item.

Each rule's accuracy is compared with chance (``mean(1 / options)``). A config **fails** when a
rule's accuracy beats chance by more than ``mmiu.shortcuts.max_gain`` (2 points) with
confidence: the one-sided Wilson lower bound at ``confidence`` (99%) of its accuracy is above
chance + max_gain. A point estimate alone would fail small configs on noise (4 of 12 right is
33% against 25%) and pass large ones with a real 2-point lift hidden in it; the bound does
neither. The rules of a config are judged as one family (Bonferroni: each at
``1 - (1 - confidence) / m`` for ``m`` rules), so a fair config fails with probability at most
1%, however many rules look at it. A signal that is the task's own skill (where the smooth
jigsaw pieces go) is reported and never fails a config. Configs listed in
``mmiu.shortcuts.allow`` are reported and do not fail. The report (``shortcuts.json``: every
rule, the best one and its interval) goes into the card; the command exits 1 when a config
fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.config import ShortcutGate
from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
from benchsmith.builders.mmiu.prompts import full_prompt
from benchsmith.core.atomic import atomic_write_text
from benchsmith.core.intervals import wilson_lower, wilson_upper, z_value
from benchsmith.core.progress import progress
from benchsmith.options.blind_rules import BlindItem, answer_prior
from benchsmith.options.distractors import OptionSet, option_report


@dataclass(frozen=True)
class RuleResult:
    name: str
    n: int
    accuracy: float
    chance: float
    lift: float
    lower_bound: float
    coverage: float
    fails: bool
    gating: bool = True  # False: a content signal of the task's own skill, reported only

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def judge_rule(
    name: str, scores: list[float], chance: float, coverage: float, gate: ShortcutGate
) -> RuleResult:
    n = len(scores)
    accuracy = sum(scores) / n if n else 0.0
    lower = wilson_lower(accuracy, n, z_value(gate.confidence))
    return RuleResult(name, n, accuracy, chance, accuracy - chance, lower, coverage,
                      lower > chance + gate.max_gain)  # fmt: skip


def family_wise(results: list[RuleResult], gate: ShortcutGate) -> tuple[list[RuleResult], float]:
    """The results judged as one family: with ``m`` gating rules each is held to confidence
    ``1 - (1 - confidence) / m`` (Bonferroni), so a config that has no shortcut fails with
    probability at most ``1 - confidence`` however many rules look at it (thirty rules at 99%
    each would fail a fair 12-item config about one time in four). Returns the re-judged
    results and the per-rule confidence."""
    from dataclasses import replace

    m = max(1, sum(r.gating for r in results))
    each = 1 - (1 - gate.confidence) / m
    z = z_value(each)
    out = []
    for r in results:
        lower = wilson_lower(r.accuracy, r.n, z)
        out.append(replace(r, lower_bound=lower,
                           fails=r.gating and lower > r.chance + gate.max_gain))  # fmt: skip
    return out, each


def blind_items(rows: Iterable[dict[str, Any]]) -> list[BlindItem]:
    return [BlindItem(r["id"], r["question"], r["answer"], r["options"], r["answer_index"])
            for r in rows]  # fmt: skip


def rule_results(rows: list[dict[str, Any]], gate: ShortcutGate) -> list[RuleResult]:
    from benchsmith.options.blind_rules import OPTION_RULES, rule_baseline

    items = blind_items(rows)
    prior = answer_prior(items)
    out = [judge_rule("answer_prior", [prior.accuracy] * prior.n, prior.chance, 1.0, gate)]
    for name, rule in OPTION_RULES.items():
        scores, coverage = rule_baseline(items, rule)
        out.append(judge_rule(name, scores, prior.chance, coverage, gate))
    return out


# an option that names an image, in the release's wordings: "Image 5", "The 5th image"
IMAGE_OPTION = re.compile(
    r"^\s*(?:image\s*#?\s*(\d+)|the\s+(\d+)\s*(?:st|nd|rd|th)\s+image)\s*[.。]?\s*$",
    re.IGNORECASE,
)


def option_image_number(option: str) -> int | None:
    """The image an option names (1-based), or None when it names none."""
    match = IMAGE_OPTION.match(option)
    return int(match.group(1) or match.group(2)) if match else None


def candidate_images(row: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The images a row's options name, in option order: the numbered images when every option
    names one ("The 5th image"), else the last images for an image-option row; None when the
    options are not images."""
    images = row["images"]
    numbers = [option_image_number(o) for o in row["options"]]
    if all(n is not None and 1 <= n <= len(images) for n in numbers):
        return [images[n - 1] for n in numbers]
    if row.get("option_kind") == "image" and len(images) >= len(row["options"]):
        return images[len(images) - len(row["options"]) :]
    return None


def image_option_kinds(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Items whose option images are not all one kind of image, from one source, in one file
    type (the release's 3DSR gold was its only ``.jpg``), and how often the one candidate of
    its own file type is the gold (a rule that answers without looking)."""
    from benchsmith.builders.mmiu.images import ref_extension

    mixed = checked = same_pixels = odd = odd_gold = 0
    for row in rows:
        candidates = candidate_images(row)
        if candidates is None:
            continue
        checked += 1
        if len({(c["kind"], c["scene"], c["params"], ref_extension(c)) for c in candidates}) != 1:
            mixed += 1
        same_pixels += len({c["sha256"] for c in candidates}) != len(candidates)
        picked = odd_file_type(candidates)
        if picked is not None:
            odd += 1
            odd_gold += picked == int(row["answer_index"])
    return {"items": checked, "mixed_kind": mixed, "repeated_image": same_pixels,
            "odd_file_type": odd, "odd_file_type_is_gold": odd_gold}  # fmt: skip


def odd_file_type(candidates: list[dict[str, Any]]) -> int | None:
    """The one candidate whose file type no other candidate has (None: no such one)."""
    from benchsmith.builders.mmiu.images import ref_extension

    types = [ref_extension(c).lower() for c in candidates]
    alone = [k for k, t in enumerate(types) if types.count(t) == 1]
    return alone[0] if len(alone) == 1 and len(types) > 2 else None


def file_type_rule(rows: list[dict[str, Any]], chance: float, gate: ShortcutGate) -> RuleResult:
    """Pick the candidate image of its own file type; chance where there is none."""
    scores, fired = [], 0
    for row in rows:
        candidates = candidate_images(row)
        picked = None if candidates is None else odd_file_type(candidates)
        if picked is None:
            scores.append(1 / max(1, len(row["options"])))
        else:
            fired += 1
            scores.append(float(picked == int(row["answer_index"])))
    return judge_rule("odd_file_type", scores, chance, fired / len(rows) if rows else 0.0, gate)


def text_only_result(
    rows: list[dict[str, Any]], gate: ShortcutGate, client: Any
) -> tuple[RuleResult, dict[str, Any]]:
    """Ask a model each item without its images; unparsed replies count as wrong."""
    from benchsmith.core.llm import require_ok, user_message
    from benchsmith.options.option_letters import extract_letter

    messages = [
        [user_message(full_prompt(r["question"], r["context"], r["prompt_order"]), ())]
        for r in rows
    ]
    results = client.complete_many(messages, desc=f"text-only {client.model}")
    require_ok(results, what=f"text-only requests to {client.base_url}")
    scores, unparsed = [], 0
    for row, result in zip(rows, results, strict=True):
        letter, _ = extract_letter(result.text, row["options"])
        unparsed += letter is None
        scores.append(float(letter == row["answer"]))
    chance = sum(1 / len(r["options"]) for r in rows) / len(rows)
    name = f"text_only_llm[{client.model}]"
    return judge_rule(name, scores, chance, 1.0, gate), {"model": client.model,
                                                         "unparsed": unparsed}  # fmt: skip


def signal_results(
    rows: list[dict[str, Any]], gate: ShortcutGate, render: Callable[[dict[str, Any]], bytes]
) -> list[RuleResult]:
    """The image-aware, position and cross-item baselines (:mod:`.gate_signals`): each signal
    as a pick-the-largest and a pick-the-smallest rule, and all of them in one learned
    options-only model scored on held-out items."""
    from dataclasses import replace

    import numpy as np

    from benchsmith.builders.mmiu.gate_signals import CONTENT_SIGNALS, option_signals, signal_names
    from benchsmith.options.cross_item_rules import learned_choice_scores, value_rule_scores

    signals = option_signals(rows, render)
    golds = [int(r["answer_index"]) for r in rows]
    chance = sum(1 / len(r["options"]) for r in rows) / len(rows)
    content = CONTENT_SIGNALS.get(rows[0]["task"], frozenset())
    names = signal_names(signals)
    out = []
    for name in names:
        values = [[option[name] for option in item] for item in signals]
        for largest in (True, False):
            scores, coverage = value_rule_scores(values, golds, largest)
            result = judge_rule(f"{'largest' if largest else 'smallest'}:{name}", scores,
                                chance, coverage, gate)  # fmt: skip
            out.append(replace(result, fails=False, gating=False) if name in content else result)
    names = [name for name in names if name not in content]
    if names:
        features = [np.array([[option[n] for n in names] for option in item]) for item in signals]
        scores = learned_choice_scores(features, golds)
        out.append(judge_rule("learned_options_only", scores, chance, 1.0, gate))
    return out


def check_task(
    rows: list[dict[str, Any]],
    gate: ShortcutGate,
    client: Any = None,
    render: Callable[[dict[str, Any]], bytes] | None = None,
) -> dict[str, Any]:
    task = rows[0]["task"]
    results = rule_results(rows, gate)
    if any(candidate_images(r) is not None for r in rows):
        results.append(file_type_rule(rows, results[0].chance, gate))
    if render is not None:
        results += signal_results(rows, gate, render)
    text_only: dict[str, Any] = {}
    if client is not None:
        result, text_only = text_only_result(rows, gate, client)
        results.append(result)
    results, each = family_wise(results, gate)
    best = max((r for r in results if r.gating), key=lambda r: (r.lower_bound - r.chance, r.lift))
    upper = wilson_upper(best.accuracy, best.n, z_value(each))
    options = option_report(
        [OptionSet(r["options"], r["answer_index"], r["option_methods"]) for r in rows]
    ).as_dict()
    failing = [r.name for r in results if r.fails]
    allowed = task in gate.allow
    images = image_option_kinds(rows)
    guarantees_hold = (
        options["gold_among_distractors"] == 0
        and options["duplicate_options"] == 0
        and options["mixed_formats"] == 0
        and images["mixed_kind"] == 0
        and images["repeated_image"] == 0
    )
    problems = {
        "gold_among_distractors": options["gold_among_distractors"],
        "duplicate_options": options["duplicate_options"],
        "mixed_formats": options["mixed_formats"],
        "option_images_of_mixed_kind_or_file_type": images["mixed_kind"],
        "the_same_image_twice_among_options": images["repeated_image"],
    }
    why = [
        f"blind rule {r.name}: accuracy {r.accuracy:.3f} over {r.n} items (chance {r.chance:.3f})"
        for r in results
        if r.fails
    ] + [
        f"{count} item(s) with {what.replace('_', ' ')}"
        for what, count in problems.items()
        if count
    ]
    return {
        "task": task,
        "items": len(rows),
        "why": why,
        "chance": round(results[0].chance, 6),
        "rules": [r.as_dict() for r in results],
        "best_rule": best.name,
        "best_lift": round(best.lift, 6),
        "best_interval": [round(best.lower_bound, 6), round(upper, 6)],
        "rules_tested": sum(r.gating for r in results),
        "confidence_per_rule": round(each, 6),
        "failing_rules": failing,
        "allowed": allowed,
        "text_only": text_only,
        "options": options,
        "option_images": images,
        "verdict": "fail"
        if (failing and not allowed) or not guarantees_hold
        else ("allowed" if failing else "pass"),
    }


def check_plan(
    plan_dir: str | Path, gate: ShortcutGate, out_path: str | Path, client: Any = None
) -> dict[str, Any]:
    """Check every task of a plan; writes the report (also when a config fails). Images are
    rendered from the plan's recorded sources (each once) for the image-aware baselines."""
    from benchsmith.builders.mmiu.images import checked_render

    plan = MmiuPlanDir.read(plan_dir)
    sources = plan.image_sources()
    rendered: dict[str, bytes] = {}

    def render(ref: dict[str, Any]) -> bytes:
        if ref["sha256"] not in rendered:
            rendered[ref["sha256"]] = checked_render(ref, sources)
        return rendered[ref["sha256"]]

    tasks = {
        task: check_task(list(plan.rows(task)), gate, client, render)
        for task in progress(plan.tasks, desc="shortcut gate", unit="task")
    }
    failing = [t for t, r in tasks.items() if r["verdict"] == "fail"]
    report = {
        "plan_fingerprint": plan.fingerprint(),
        "mode": plan.mode,
        "gate": {
            "max_gain": gate.max_gain,
            "confidence": gate.confidence,
            "allow": list(gate.allow),
            "text_only_model": gate.text_only_model,
        },  # fmt: skip
        "tasks": tasks,
        # an ingested release is described, not gated: its failures are findings
        "failed": failing if plan.mode == "rebuild" else [],
        "failing_in_release": failing if plan.mode == "ingest" else [],
    }
    atomic_write_text(out_path, json.dumps(report, indent=2, sort_keys=True) + "\n")
    return report
