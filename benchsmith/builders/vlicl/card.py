"""The dataset card (``README.md``) of a published VL-ICL folder.

The card is rendered from ``build_info`` (what was built, removed and why); the publisher adds
the ``configs`` / ``dataset_info`` YAML that ``load_dataset`` reads. Nothing here reads rows or
images: :mod:`.publication` streams those, and the publisher asks for the card last.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchsmith.builders.vlicl.features import EPISODES_CONFIG, TASKS
from benchsmith.builders.vlicl.rai import RAI
from benchsmith.family.base import Card


def sorted_histogram(counter: Counter) -> dict[str, int]:
    """Answer -> count with numeric answers in numeric order (``"2"`` before ``"10"``)."""

    def key(answer: str) -> tuple[int, float, str]:
        try:
            return (0, float(answer), answer)
        except ValueError:
            return (1, 0.0, answer)

    return {a: counter[a] for a in sorted(counter, key=key)}


def histogram_rows(histogram: dict[str, dict[str, int]] | None) -> list[tuple[str, int, int]]:
    """(answer, support count, query count) in numeric order, for the card's table."""
    if not histogram:
        return []
    support, query = histogram.get("support", {}), histogram.get("query", {})
    merged = sorted_histogram(Counter({**support, **query}))
    return [(a, support.get(a, 0), query.get(a, 0)) for a in merged]


def vlicl_card(info: dict[str, Any]) -> Card:
    tasks = [t for t in TASKS if t in info["counts"]]
    default = "open_mi" if "open_mi" in tasks else (tasks[0] if tasks else None)
    ingest = info["mode"] == "ingest"
    metadata = {
        "pretty_name": "VL-ICL Bench (benchsmith rebuild)",
        "license": "other",
        "license_name": "vlicl-imagenet-terms-cc-by-4.0",
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "tags": ["multimodal", "in-context-learning", "few-shot", "benchsmith"],
        "source_datasets": ["MiniImageNet (ImageNet 2012, Ravi-Larochelle split)", "CLEVR v1.0"],
    }
    leakage = info["leakage"]
    context = {
        "info": info,
        "tasks": tasks,
        "default_config": default,
        "leakage_tasks": leakage["tasks"],
        "episodes": info["configs"].get(EPISODES_CONFIG, {}),
        "clevr_histogram": histogram_rows(info["answer_histograms"].get("clevr")),
    }
    return Card(metadata, context, default, license_text=vlicl_license(info, ingest), rai=RAI)


def vlicl_license(info: dict[str, Any], ingest: bool) -> str:
    """The card's Licence section and LICENSE.md: each source's terms, and ours."""
    font = info.get("font")
    glyphs = (
        f" (rendered with {font['name']}; the font's own licence applies to the glyph shapes)"
        if font
        else ""
    )
    lines = [
        "- MiniImageNet images (open_mi, matching_mi) are ImageNet images, under the **ImageNet "
        "terms\n  of access** (non-commercial research and education only); not redistributable "
        "otherwise.",
        "- CLEVR v1.0 images: **CC BY 4.0** (Johnson et al.).",
        "- Rendered operator images, questions, episodes, this card and the build code: ours,\n"
        f"  **Apache-2.0**{glyphs}.",
    ]
    if ingest:
        lines.append(
            "- Ingested rows come from the VL-ICL release (code MIT); images keep their source "
            "licences."
        )
    return "\n".join(lines) + "\n"
