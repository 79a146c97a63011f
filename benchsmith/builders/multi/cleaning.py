"""Cleaning the paper describes (spec section 1), each change a recorded decision.

- **Flags** (always, on every question; content unchanged): an empty option, two options with
  the same text (after NFKC, case and white space), an SA/MA question whose options cannot be
  found, a question whose answer names a letter it does not offer.
- **Hints removed** ("distillation"): bracketed notes that give the answer's form away, such as
  ``（注意：多选）``, ``<多选>``, ``【提示】...``. The removed text is the decision's evidence.
- **Parallel blanks split** ("disambiguation"): an FB question made of numbered parts
  (``①...[MASK]；②...[MASK]`` or ``(1)...(2)...``), each with its own blanks, becomes one question
  per part (``{question_id}.{k}``, 1-based), the answer lines dealt out by the parts' blanks.

Rewrites apply to the problems ``cleaning.apply_to`` names (crawled ones by default: the
release's annotators already did this, and keeping its ids lets the legacy scorer read official
prediction files).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from benchsmith.builders.multi.config import Cleaning
from benchsmith.builders.multi.questions import (
    answer_blanks,
    image_class,
    parse_options,
    points_of,
)
from benchsmith.core.records import decision_record
from benchsmith.sources.exams.release import image_tags

STAGE = "cleaning"
HINTS = re.compile(
    r"\*{0,3}[（(]\*{0,3}\s*(?:注意|提示|温馨提示|注)\s*[:：][^（）()]*[）)]\*{0,3}"
    r"|[<＜《【\[]\s*(?:单选|多选|不定项|填空)\s*[>＞》】\]]"
    r"|【\s*提示\s*】[^\n]*"
)
PART = re.compile(r"(?:(?<=^)|(?<=[\s；;，,。：:]))(?:[①②③④⑤⑥⑦⑧⑨⑩]|[（(][1-9][）)])")
MASK = "[MASK]"


def normalised_option(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).casefold()


def flag(row: dict[str, Any], name: str, evidence: dict[str, Any]) -> None:
    row["flags"].append(name)
    row["decisions"].append(decision_record(STAGE, "flagged", name, evidence))


def flag_question(row: dict[str, Any]) -> None:
    """Record what is wrong with a question without changing it."""
    if row["question_type"] != "Other" and not (row["answer"] or "").strip():
        # the release without `problem_answer_list`, or an empty entry: kept (the question is
        # the source's) but never silently published as if it had a gold
        flag(row, "ANSWER_MISSING", {"type": row["question_type"]})
    if row["question_type"] not in ("SA", "MA"):
        return
    options = row["options"] or []
    if not options:
        flag(row, "OPTIONS_NOT_FOUND", {"type": row["question_type"]})
        return
    empty = [o["label"] for o in options if not o["text"].strip()]
    if empty:
        flag(row, "EMPTY_OPTION", {"labels": empty})
    seen: dict[str, str] = {}
    for option in options:
        key = normalised_option(option["text"])
        if key and key in seen:
            flag(row, "DUPLICATE_OPTIONS", {"labels": [seen[key], option["label"]]})
        seen.setdefault(key, option["label"])
    labels = {o["label"] for o in options}
    outside = sorted(set((row["answer"] or "").strip()) - labels)
    if row["answer"] is not None and outside:
        flag(row, "ANSWER_NOT_AN_OPTION", {"answer": row["answer"], "letters": outside})


def remove_hints(row: dict[str, Any]) -> None:
    for key in ("question_content", "problem_content"):
        found = [m.group(0) for m in HINTS.finditer(row[key])]
        if not found:
            continue
        row[key] = re.sub(r"[ \t]{2,}", " ", HINTS.sub("", row[key])).strip()
        row["decisions"].append(
            decision_record(STAGE, "edited", "HINT_REMOVED", {"field": key, "removed": found})
        )
    refresh_text(row)


def refresh_text(row: dict[str, Any]) -> None:
    shared, content = row["problem_content"], row["question_content"]
    row["text"] = f"{shared}\n{content}" if shared else content
    if row["question_type"] in ("SA", "MA"):
        row["options"] = parse_options(content)[1] or None


def parallel_parts(content: str) -> list[tuple[str, int]]:
    """(part text, blanks in it) when ``content`` is two or more numbered parts that each hold
    a blank; [] otherwise. Text before the first part is prepended to every part."""
    starts = [m.start() for m in PART.finditer(content)]
    if len(starts) < 2:
        return []
    lead = content[: starts[0]].strip()
    parts = [
        content[a:b].strip(" ；;，,")
        for a, b in zip(starts, [*starts[1:], len(content)], strict=False)
    ]
    counts = [p.count(MASK) for p in parts]
    if min(counts) < 1:
        return []
    return [
        ((f"{lead}\n{p}" if lead else p).strip(), n) for p, n in zip(parts, counts, strict=False)
    ]


def split_parallel(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per part of a parallel FB, or ``[row]``."""
    if row["question_type"] != "FB" or row["answer"] is None:
        return [row]
    parts = parallel_parts(row["question_content"])
    lines = row["answer"].strip().split("\n")
    if not parts or sum(n for _, n in parts) != len(lines):
        return [row]
    out, used = [], 0
    for k, (text, blanks) in enumerate(parts, start=1):
        answer = "\n".join(lines[used : used + blanks])
        used += blanks
        part = {**row, "flags": list(row["flags"]), "decisions": list(row["decisions"])}
        part["question_id"] = f"{row['question_id']}.{k}"
        part["sub_index"] = f"{row['sub_index']}.{k}"
        part["question_content"], part["answer"] = text, answer
        part["answer_blanks"] = answer_blanks(answer)
        part["points"] = points_of("FB", answer)
        refresh_text(part)
        numbers = set(image_tags(part["text"]))
        keep = [i for i, n in enumerate(row["image_numbers"]) if n in numbers]
        for key in ("image_paths", "image_sha256", "image_numbers"):
            part[key] = [row[key][i] for i in keep]
        part["num_images"] = len(keep)
        part["image_class"] = image_class(len(keep))
        part["decisions"].append(decision_record(
            STAGE, "split", "PARALLEL_BLANKS",
            {"from": row["question_id"], "part": k, "of": len(parts), "blanks": blanks}))  # fmt: skip
        out.append(part)
    return out


def clean_questions(rows: list[dict[str, Any]], settings: Cleaning) -> list[dict[str, Any]]:
    """Cleaned rows in order; rewrites only for the sources ``settings.apply_to`` names."""
    out = []
    for row in rows:
        rewrite = settings.apply_to == "all" or (
            settings.apply_to == "crawled" and row["source_kind"] != "release"
        )
        pieces = [row]
        if rewrite and settings.remove_hints:
            remove_hints(row)
        if rewrite and settings.split_parallel_blanks:
            pieces = split_parallel(row)
        for piece in pieces:
            flag_question(piece)
            out.append(piece)
    return out
