"""``benchsmith build mmiu check``: the shortcut gate every config must pass before publish.

For every task of a plan it runs, without images:

- the blind rules of :mod:`benchsmith.stages.blind_rules` (answer-letter prior; longest,
  shortest, odd format, odd precision, odd file type, question overlap; and for numbers:
  closest to / farthest from the identity pose, most decimals, odd signature, the option in
  the middle of the others or farthest from them, smallest or largest);
- a text-only LLM (question, context and options, no image) when one is configured, through
  the one LLM client (cached; its replies read with MMIU's answer extraction);
- the option guarantees again (gold never a distractor, distinct options, one format per item,
  answer letters balanced by chi-square) and, for image options, one kind of image per item.

Each rule's accuracy is compared with chance (``mean(1 / options)``). A config **fails** when a
rule's accuracy beats chance by more than ``mmiu.shortcuts.max_gain`` (2 points) with
confidence: the one-sided Wilson lower bound at ``confidence`` (99%) of its accuracy is above
chance + max_gain. A point estimate alone would fail small configs on noise (4 of 12 right is
33% against 25%) and pass large ones with a real 2-point lift hidden in it; the bound does
neither. Configs listed in ``mmiu.shortcuts.allow`` are reported and do not fail. The report
(``shortcuts.json``) goes into the card; the command exits 1 when a config fails.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.config import ShortcutGate
from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
from benchsmith.builders.mmiu.prompts import full_prompt
from benchsmith.core.atomic import atomic_write_text
from benchsmith.stages.blind_rules import BlindItem, run_blind_baselines
from benchsmith.stages.distractors import OptionSet, option_report


def z_value(confidence: float) -> float:
    """The standard normal quantile (``scipy.stats.norm.ppf`` is this same function; importing
    ``scipy.stats`` costs a second and a half of start-up in every plan and check process)."""
    from scipy.special import ndtri

    return float(ndtri(confidence))


def wilson_lower(accuracy: float, n: int, z: float) -> float:
    """One-sided Wilson lower bound of a rate observed as ``accuracy`` over ``n`` trials."""
    if n == 0:
        return 0.0
    centre = accuracy + z * z / (2 * n)
    spread = z * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


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


def blind_items(rows: Iterable[dict[str, Any]]) -> list[BlindItem]:
    return [BlindItem(r["id"], r["question"], r["answer"], r["options"], r["answer_index"])
            for r in rows]  # fmt: skip


def rule_results(rows: list[dict[str, Any]], gate: ShortcutGate) -> list[RuleResult]:
    from benchsmith.stages.blind_rules import OPTION_RULES, rule_baseline

    items = blind_items(rows)
    prior = [r for r in run_blind_baselines(items) if r.name == "answer_prior"][0]
    out = [judge_rule("answer_prior", [prior.accuracy] * prior.n, prior.chance, 1.0, gate)]
    for name, rule in OPTION_RULES.items():
        scores, coverage = rule_baseline(items, rule)
        out.append(judge_rule(name, scores, prior.chance, coverage, gate))
    return out


IMAGE_OPTION = re.compile(r"^image \d+$", re.IGNORECASE)


def image_option_kinds(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Items whose option images are not all one kind of image, from one source, in one file
    type (the release's 3DSR gold was its only ``.jpg``)."""
    from benchsmith.builders.mmiu.images import ref_extension

    mixed = checked = same_pixels = 0
    for row in rows:
        is_image = row.get("option_kind") == "image" or all(
            IMAGE_OPTION.match(o.strip()) for o in row["options"]
        )
        if not is_image or len(row["images"]) < len(row["options"]):
            continue
        checked += 1
        first = len(row["images"]) - len(row["options"])
        candidates = row["images"][first:]
        if len({(c["kind"], c["scene"], c["params"], ref_extension(c)) for c in candidates}) != 1:
            mixed += 1
        same_pixels += len({c["sha256"] for c in candidates}) != len(candidates)
    return {"items": checked, "mixed_kind": mixed, "repeated_image": same_pixels}


def text_only_result(
    rows: list[dict[str, Any]], gate: ShortcutGate, client: Any
) -> tuple[RuleResult, dict[str, Any]]:
    """Ask a model each item without its images; unparsed replies count as wrong."""
    from benchsmith.core.llm import require_ok, user_message
    from benchsmith.scoring.option_letters import extract_letter

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


def check_task(
    rows: list[dict[str, Any]], gate: ShortcutGate, client: Any = None
) -> dict[str, Any]:
    task = rows[0]["task"]
    results = rule_results(rows, gate)
    text_only: dict[str, Any] = {}
    if client is not None:
        result, text_only = text_only_result(rows, gate, client)
        results.append(result)
    best = max(results, key=lambda r: (r.lower_bound - r.chance, r.lift))
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
    why = [f"blind rule {name}" for name in failing] + [
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
    """Check every task of a plan; writes the report (also when a config fails)."""
    plan = MmiuPlanDir.read(plan_dir)
    tasks = {task: check_task(list(plan.rows(task)), gate, client) for task in plan.tasks}
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
