"""Problems to questions: one row per entry of ``problem_content_list`` (spec section 4).

A problem is one record of the release's problem JSON (or of a converted page, in the same
shape); question ``i`` of problem ``p`` is ``p_i`` (0-based), its model input is
``problem_content + "\\n" + problem_content_list[i]``, and ``[IMAGE_n]`` in that text is a
1-based index into the problem's ``img_paths``. Each row carries what the published schema
needs: type, points per the paper (SA 1, MA one per correct letter, FB one per blank, OP 1,
Other 0), options parsed from the option lines, image class by the number of distinct image
tags, education level and track, subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from benchsmith.builders.multi.config import EDUCATION_NAMES, SOCIETY_TRACKS, TYPE_NAMES
from benchsmith.sources.exams.release import image_tags

OPTION_MARK = re.compile(r"(?:(?<=^)|(?<=\n)|(?<=\s))([A-Z])[.．、]\s*")


@dataclass(frozen=True)
class SourceProblem:
    """One problem and where it came from (for provenance and for finding its images)."""

    problem_id: str
    record: dict[str, Any]
    kind: str  # release | html | scan
    root: str  # the root its files live under: release | converted
    file: str  # the problem file, relative to the root
    file_sha256: str
    image_files: tuple[str, ...]  # per img_paths entry, relative to the root
    image_sha256: tuple[str, ...]
    version: str
    extra_sources: tuple[dict[str, str], ...] = field(default_factory=tuple)
    scan_quality: float | None = None  # a scanned page's cleanliness (..scan_quality)


def parse_options(content: str) -> tuple[str, list[dict[str, str]]]:
    """(the text before the options, the options as {label, text}) of a question; options run
    ``A``, ``B``, ``C``... in order, ``A`` at a line start and the others at a line start or
    after white space (``A. [IMAGE_2] B. [IMAGE_3]``), so ``A.B`` inside a stem is no option."""
    marks, expected = [], "A"
    for match in OPTION_MARK.finditer(content):
        at_line_start = match.start() == 0 or content[match.start() - 1] == "\n"
        if expected == "A" and not at_line_start:
            continue  # "A." inside a stem (A.B, AB=AC) is not where the options begin
        if match.group(1) == expected:
            marks.append(match)
            expected = chr(ord(expected) + 1)
    if not marks:
        return content, []
    options = []
    for k, match in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(content)
        options.append({"label": match.group(1), "text": content[match.end() : end].strip()})
    return content[: marks[0].start()].rstrip(), options


def answer_blanks(answer: str | None) -> list[list[str]]:
    """FB answers: one line per blank (``；`` separates blanks too: the release writes some
    two-blank answers as ``春；秋``), each with its ``或`` alternatives."""
    if not answer:
        return []
    lines = [p.strip() for p in re.split(r"\n+|[;；]", answer.strip()) if p.strip()]
    return [[alt.strip() for alt in line.split("或")] for line in lines]


def points_of(question_type: str, answer: str | None) -> int:
    if question_type == "MA":
        return len(set((answer or "").strip()))
    if question_type == "FB":
        return len(answer_blanks(answer))
    return 0 if question_type == "Other" else 1


def education_of(record: dict[str, Any]) -> tuple[str, str]:
    """(education, track): 初中/高中/大学 are School; society exams are Driving (驾考) or AAT
    (行测), read from the education name or, under 社会, from the first subject."""
    name = str(record.get("education") or "")
    subjects = record.get("subject") or []
    first = subjects[0] if isinstance(subjects, list) and subjects else str(subjects or "")
    education = EDUCATION_NAMES.get(name, "Society" if name in SOCIETY_TRACKS else "")
    if not education:
        raise ValueError(f"unknown education {name!r}")
    track = SOCIETY_TRACKS.get(name) or SOCIETY_TRACKS.get(first) or "School"
    if education == "Society" and track == "School":
        raise ValueError(f"society problem with subject {first!r}: neither 驾考 nor 行测")
    return education, track


def image_class(count: int) -> str:
    return "NI" if count == 0 else "SI" if count == 1 else "MI"


def knowledge_list(record: dict[str, Any]) -> list[str]:
    value = record.get("knowledge") or []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _number(value: Any) -> float | None:
    try:
        return None if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return None


def questions_of(problem: SourceProblem) -> list[dict[str, Any]]:
    """Every question of one problem, in order, as plan rows."""
    record = problem.record
    education, track = education_of(record)
    subjects = record.get("subject") or []
    subject = subjects[0] if isinstance(subjects, list) and subjects else str(subjects or "")
    answers = record.get("problem_answer_list")
    analyses = record.get("problem_analysis_list") or [""] * len(record["problem_type_list"])
    rows = []
    for index, (content, type_name) in enumerate(
        zip(record["problem_content_list"], record["problem_type_list"], strict=True)
    ):
        question_type = TYPE_NAMES[type_name]
        answer = None if answers is None else str(answers[index])
        rows.append(
            question_row(
                problem,
                index,
                record["problem_content"] or "",
                content,
                question_type,
                answer,
                str(analyses[index] or ""),
                education,
                track,
                subject,
            )  # fmt: skip
        )
    return rows


def question_row(
    problem: SourceProblem, index: int | str, shared: str, content: str, question_type: str,
    answer: str | None, analysis: str, education: str, track: str, subject: str,
) -> dict[str, Any]:  # fmt: skip
    record = problem.record
    text = f"{shared}\n{content}" if shared else content
    _, options = parse_options(content) if question_type in ("SA", "MA") else ("", [])
    numbers = sorted(set(image_tags(text)))
    source = {"dataset": f"multi-{problem.root}", "split": problem.kind,
              "id": problem.problem_id, "file": problem.file, "sha256": problem.file_sha256,
              "license": "", "url": ""}  # fmt: skip
    image_sources = [
        {"dataset": f"multi-{problem.root}", "split": "image", "id": f"IMAGE_{n}",
         "file": problem.image_files[n - 1], "sha256": problem.image_sha256[n - 1],
         "license": "", "url": ""}
        for n in numbers
    ]  # fmt: skip
    return {
        "question_id": f"{problem.problem_id}_{index}",
        "problem_id": problem.problem_id,
        "sub_index": str(index),
        "subject_code": problem.problem_id.rsplit("_", 1)[0],
        "subject": subject,
        "education": education,
        "track": track,
        "question_type": question_type,
        "problem_content": shared,
        "question_content": content,
        "text": text,
        "options": options or None,
        "answer": answer,
        "answer_blanks": answer_blanks(answer) if question_type == "FB" else [],
        "points": points_of(question_type, answer),
        "analysis": analysis,
        "knowledge": knowledge_list(record),
        "image_paths": [problem.image_files[n - 1] for n in numbers],
        "image_sha256": [problem.image_sha256[n - 1] for n in numbers],
        "image_numbers": numbers,
        "num_images": len(numbers),
        "image_class": image_class(len(numbers)),
        "image_in_choice": any(image_tags(o["text"]) for o in options),
        "difficulty": _number(record.get("difficulty")),
        "quality": _number(record.get("quality")),
        "source_kind": problem.kind,
        "source_root": problem.root,
        "source_version": problem.version,
        "scan_quality": problem.scan_quality,
        "flags": [],
        "sources": [source, *problem.extra_sources, *image_sources],
        "decisions": [],
    }
