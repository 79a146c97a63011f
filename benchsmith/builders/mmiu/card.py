"""The dataset card of a published MMIU folder, from its ``build_info`` alone."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmiu.config import SCANNET_TASKS, TASK_ABBR, TASK_RELATIONSHIP, TASKS
from benchsmith.builders.mmiu.features import CIRCULAR_CONFIG
from benchsmith.builders.mmiu.rai import RAI
from benchsmith.family.base import Card


def shortcut_rows(info: dict[str, Any]) -> list[dict[str, Any]]:
    """Per task: chance, the strongest blind rule, its lift and bound, and the verdict."""
    rows = []
    for task, report in info["shortcuts"]["tasks"].items():
        rules = {r["name"]: r for r in report["rules"]}
        best = rules[report["best_rule"]]
        interval = report.get("best_interval") or [best["lower_bound"], None]
        content = [r for r in report["rules"] if not r.get("gating", True)]
        top_content = max(content, key=lambda r: r["accuracy"]) if content else None
        rows.append({"task": task, "n_items": report["items"], "chance": report["chance"],
                     "best": best, "verdict": report["verdict"], "interval": interval,
                     "rules_tested": report.get("rules_tested", len(report["rules"])),
                     "content": top_content,
                     "why": "; ".join(report.get("why") or []) or "-",
                     "text_only": next((r for n, r in rules.items()
                                        if n.startswith("text_only_llm")), None)})  # fmt: skip
    return rows


def mmiu_card(info: dict[str, Any]) -> Card:
    ingest = info["mode"] == "ingest"
    tasks = list(info["counts"]) if ingest else [t for t in TASKS if t in info["counts"]]
    scannet = ingest or any(t in SCANNET_TASKS for t in tasks)
    metadata = {
        "pretty_name": "MMIU (official release, ingested by benchsmith)"
        if ingest
        else "MMIU (benchsmith rebuild: ScanNet and COCO tasks)",
        "license": "other",
        "license_name": "mmiu-rebuild-scannet-tou-coco-flickr",
        "language": ["en"],
        "task_categories": ["visual-question-answering", "multiple-choice"],
        "tags": ["multimodal", "multi-image", "spatial-reasoning", "3d", "benchsmith"],
        "source_datasets": ["ScanNet v2", "COCO 2014 val"],
    }
    context = {
        "info": info,
        "tasks": tasks,
        "relationship": TASK_RELATIONSHIP,
        "ingest": ingest,
        "abbr": TASK_ABBR,
        "shortcuts": shortcut_rows(info),
        "circular": info["configs"].get(CIRCULAR_CONFIG, {}),
        "references": info["scannet_images"] == "reference" and scannet,
    }
    return Card(
        metadata, context, tasks[0] if tasks else None, license_text=mmiu_license(), rai=RAI
    )


def mmiu_license() -> str:
    return (
        "- **ScanNet v2** frames, depth and annotations (the `3d_*` and "
        "`visual_correspondence_scannet`\n  configs) are under the **ScanNet Terms of Use**: "
        "non-commercial research and education,\n  no redistribution. This dataset therefore "
        "ships ScanNet images as references (scene,\n  frame, sha256) unless it was built with "
        "`--scannet-images embed` for private use; rehydrate\n  it from your own ScanNet copy "
        "(access: http://www.scan-net.org/).\n"
        "- **COCO 2014** images keep their **Flickr licences** (each row's `provenance.sources` "
        "names the\n  licence and URL of its image); COCO annotations are CC BY 4.0.\n"
        "- Questions, options, rendered pieces and transforms, this card and the build code: "
        "ours,\n  **Apache-2.0**.\n"
    )
