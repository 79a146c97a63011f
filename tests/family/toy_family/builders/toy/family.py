"""Toy, a benchmark of arithmetic questions read from one JSON file: the smallest family that
stands on the contract alone (``tests/family/test_a_new_family.py`` adds it to a copy of the
package). A step, its inputs, a publication, an auditor and column roles; nothing else."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.command_inputs import argument, json_switch, params_file
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log, print_json
from benchsmith.core.records import provenance, source_ref
from benchsmith.family.base import (
    Card,
    ConfigSpec,
    Family,
    Publication,
    RowAuditor,
    Step,
)
from benchsmith.family.publish_settings import PublishSettings


@dataclass(frozen=True)
class PlanInputs:
    """What ``build toy plan`` reads and writes."""

    questions: Path = argument("JSON list of {id, question, answer}", required=True, metavar="FILE")
    out: Path = argument("plan file to write", required=True, metavar="FILE")
    json: bool = json_switch("question count")
    params: Path | None = params_file()


def _items(questions: Path) -> list[dict[str, Any]]:
    return sorted(json.loads(questions.read_text(encoding="utf-8")), key=lambda q: q["id"])


def run_plan(args: PlanInputs) -> int:
    items = _items(args.questions)
    atomic_write_json(args.out, {"root": str(args.questions.parent.resolve()),
                                 "file": args.questions.name,
                                 "sha256": sha256_file(args.questions), "items": items})  # fmt: skip
    log(f"toy plan: {len(items)} questions -> {args.out}")
    print_json({"questions": len(items)}, args.json)
    return 0


@dataclass(frozen=True)
class PublishInputs:
    """What ``publish toy`` reads."""

    plan: Path = argument("plan file of `build toy plan`", positional=True, metavar="PLAN")


def _rows(plan: dict[str, Any]) -> list[dict[str, Any]]:
    digest = hashlib.sha256(json.dumps(plan["items"], sort_keys=True).encode()).hexdigest()
    return [
        {
            "id": item["id"],
            "question": item["question"],
            "answer": str(item["answer"]),
            "provenance": provenance(
                family="toy",
                params_hash=digest,
                seed=0,
                sources=[
                    source_ref(
                        dataset="toy",
                        split="test",
                        id=item["id"],
                        file=plan["file"],
                        sha256=plan["sha256"],
                    )
                ],
            ),
        }  # fmt: skip
        for item in plan["items"]
    ]


class ToyPublication(Publication):
    family = "toy"
    card_template = "toy.md.j2"
    audit_how = "each row is read again from the questions file"

    def __init__(self, plan: Path):
        self.plan = json.loads(Path(plan).read_text(encoding="utf-8"))

    def configs(self):
        import datasets

        from benchsmith.hf.features import PROVENANCE_FEATURE

        string = datasets.Value("string")
        features = datasets.Features({"id": string, "question": string, "answer": string,
                                      "provenance": PROVENANCE_FEATURE})  # fmt: skip
        yield ConfigSpec("questions", features, ("test",), lambda split, _: [_rows(self.plan)])

    def build_info(self, written):
        return {"roots": {"questions": self.plan["root"]}, "file": self.plan["file"]}

    def card(self, info, written):
        return Card({"pretty_name": "Toy", "license": "cc0-1.0"},
                    {"rows": sum(w.num_examples for w in written)})  # fmt: skip


class ToyAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: dict[str, str]):
        from benchsmith.hf.roots import resolve_roots

        self.root = Path(resolve_roots(info.get("roots"), dataset_dir, roots)["questions"])
        questions = self.root / info["file"]
        plan = {"file": info["file"], "sha256": sha256_file(questions), "items": _items(questions)}
        self.expected = {row["id"]: row for row in _rows(plan)}

    def source_path(self, source):
        return self.root / source["file"]

    def audit_row(self, config, split, row, report):
        derived = self.expected.get(row["id"])
        if derived is None:
            report.fail("no such question in the source", config=config, row=row["id"])
            return
        report.compare_derived_row(config, row["id"], row, derived)


class ToyFamily(Family):
    name = "toy"
    title = "Toy"
    summary = "arithmetic questions from one JSON file: plan -> publish"
    steps = (Step("plan", "read the questions", "Write the plan file from the questions.",
                  PlanInputs, run_plan),)  # fmt: skip
    root_names = ("questions",)
    audit_help = "each row is read again from the questions file; --id: id"
    publish_inputs = PublishInputs

    def publication(self, args: PublishInputs, settings: PublishSettings) -> Publication:
        return ToyPublication(args.plan)

    def auditor(self, dataset_dir, info, roots):
        return ToyAuditor(dataset_dir, info, roots)

    def columns(self, info):
        from benchsmith.hf.dataset_view import ColumnMap

        return ColumnMap(id="id", question="question", answer="answer")


TOY = ToyFamily()
