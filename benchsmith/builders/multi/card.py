"""The dataset card of a published MULTI folder, from its ``build_info`` alone."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.multi.rai import RAI
from benchsmith.family.base import Card
from benchsmith.hf.card import size_category


def multi_card(info: dict[str, Any]) -> Card:
    kinds = info.get("source_kinds") or {}
    metadata = {
        "pretty_name": "MULTI (benchsmith build: release, crawled pages and scans)",
        "license": "other",
        "license_name": "multi-release-terms",
        "language": ["zh", "en"],
        "task_categories": ["visual-question-answering", "multiple-choice", "question-answering"],
        "tags": ["multimodal", "exam", "chinese", "science", "benchsmith"],
        "source_datasets": ["OpenDFM/MULTI-Benchmark"],
        "size_categories": [size_category(int(info["counts"]["selected"]))],
    }
    context = {"info": info, "kinds": kinds, "ocr": info.get("ocr") or {}}
    return Card(metadata, context, "questions", license_text=multi_license(), rai=RAI)


def multi_license() -> str:
    return (
        "- **Questions, answers, analyses, knowledge pieces and images of the official release**"
        "\n  (`source_kind: release`, the `extend` config): as the MULTI release states them "
        "(OpenDFM,\n  `OpenDFM/MULTI-Benchmark` on the Hugging Face Hub; research use). The "
        "questions come from\n  public question banks and exams; their copyright stays with "
        "their owners.\n"
        "- **Crawled pages and scans** (`source_kind: html` or `scan`): the terms of the site or "
        "exam they\n  came from; this build records each page's file and sha256 in "
        "`provenance.sources`.\n"
        "- The conversion, cleaning, selection, this card and the build code: ours, "
        "**Apache-2.0**.\n"
    )
