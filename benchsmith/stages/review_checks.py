"""Review of zero-pass samples (no judge got them right): wrong answer key, or just very hard?

LIME §2 step 3. A sample that no judge solves is either hard (keep) or broken: a wrong or
ambiguous gold answer, an unreadable image (drop). Two reviewers decide:

1. **An LLM with the image** (:func:`review_zero_pass`). It gets the image(s), the question, the
   options, the gold answer(s) joined by ``"; "``, and must end with ``Judgement: YES`` or
   ``Judgement: NO``. YES keeps the sample; NO drops it (``ZERO_PASS_LLM_REJECT``). Unlike the
   original, which silently rejected unparsable replies and API errors alike, these are told
   apart and counted: an unparsable reply drops with ``ZERO_PASS_PARSE_FAIL``; a failed request
   (server down, rate limit after retries) is no verdict at all: the sample is **kept** with
   ``ZERO_PASS_LLM_ERROR``, counted as undecided, and ``curate`` publishes nothing until a rerun
   (failures are not cached, answers are: only the failed calls are sent again) decides it.
   Image detail defaults to ``"high"``: the original sent ``detail: "low"`` (a 512 px
   thumbnail), which makes OCR and infographic answers unverifiable.
2. **Humans** (:func:`read_human_verdicts`, :func:`apply_human_verdicts`): verdict files under
   ``annotations/`` override the LLM for the samples they name.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.json_files import read_jsonl
from benchsmith.core.llm import ChatResult, LLMClient, user_message
from benchsmith.hf.dataset_view import SampleView
from benchsmith.options.question_prompt import option_letter, render_options
from benchsmith.stages.base import StageDecision

ZERO_PASS_LLM_REJECT = "ZERO_PASS_LLM_REJECT"
ZERO_PASS_PARSE_FAIL = "ZERO_PASS_PARSE_FAIL"
ZERO_PASS_LLM_ERROR = "ZERO_PASS_LLM_ERROR"
ZERO_PASS_HUMAN_REJECT = "ZERO_PASS_HUMAN_REJECT"
VERDICTS = ("accept", "reject")

REVIEW_PROMPT = """\
You are checking the answer key of a visual question-answering benchmark.
Look at the image and read the question and its reference answer.

Question: {question}
{options}Reference answer: {answers}

Is the reference answer a correct answer to this question for this image? When several \
reference answers are listed, separated by "; ", they are alternatives given by different \
annotators: judge whether they are acceptable overall.
You may reason briefly first. Then end your reply with exactly one line, either
Judgement: YES
if the reference answer is correct, or
Judgement: NO
if it is wrong, ambiguous, or cannot be verified from the image and the question."""


@dataclass(frozen=True)
class ReviewConfig:
    """``detail``: image detail for the reviewer ("high" by default; the original used "low")."""

    model: str
    detail: str = "high"
    max_tokens: int = 1000


@dataclass(frozen=True)
class HumanVerdict:
    sample_id: str
    verdict: Literal["accept", "reject"]
    reviewer: str
    note: str
    source: str  # "file:line", so every override can be traced to its annotation


# -- the LLM reviewer ----------------------------------------------------------------------------


def gold_answers(sample: SampleView) -> list[str]:
    """The gold answer(s) as text; an option index or letter is shown as ``B. option text``."""
    answers = sample.answer if isinstance(sample.answer, list) else [sample.answer]
    return [_describe_answer(a, sample.choices) for a in answers if a is not None]


def _describe_answer(answer: Any, choices: list[str] | None) -> str:
    if not choices:
        return str(answer)
    index = None
    text = str(answer).strip()
    if isinstance(answer, int) and not isinstance(answer, bool):
        index = answer
    elif len(text) == 1 and text.isalpha() and text.isupper():
        index = ord(text) - ord("A")
    elif text.isdigit() and text not in choices:  # AI2D-style index stored as a string
        index = int(text)
    if index is not None and 0 <= index < len(choices):
        return f"{option_letter(index)}. {choices[index]}"
    return text


def review_prompt(sample: SampleView) -> str:
    options = f"Options:\n{render_options(sample.choices)}\n" if sample.choices else ""
    return REVIEW_PROMPT.format(
        question=sample.question.strip(),
        options=options,
        answers="; ".join(gold_answers(sample)),
    )


def review_messages(sample: SampleView, config: ReviewConfig) -> list[dict]:
    return [user_message(review_prompt(sample), sample.images, detail=config.detail)]


_MARKUP = re.compile(r"[*_`#~]")
_SLOT = re.compile(
    r"<?\s*(?:your\s+)?judge?ment\s*>?\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE
)
_VALUE = re.compile(r"^[\[(\"'<]*\s*(yes|no)\s*[\])\"'>]*[\s.!。]*$", re.IGNORECASE)


def parse_verdict(text: str | None) -> Literal["YES", "NO"] | None:
    """YES/NO from the last ``Judgement:`` slot, or from a reply that is just yes/no.

    Markdown emphasis, case, brackets and trailing punctuation are ignored; anything else
    after the slot ("YES|NO", "maybe", "YES, but ...") is unparsable and returns ``None``.
    """
    if not text:
        return None
    clean = _MARKUP.sub("", text)
    slots = _SLOT.findall(clean)
    candidate = slots[-1].strip() if slots else clean.strip()
    match = _VALUE.match(candidate)
    return match.group(1).upper() if match else None  # type: ignore[return-value]


def _review_decision(sample: SampleView, result: ChatResult, config: ReviewConfig) -> StageDecision:
    evidence: dict[str, Any] = {
        "model": result.model,
        "cache_key": result.key,
        "detail": config.detail,
        "n_images": len(sample.images),
    }
    if not result.ok:
        evidence["error"] = result.error
        return StageDecision(sample.sample_id, "keep", ZERO_PASS_LLM_ERROR, evidence)
    verdict = parse_verdict(result.text)
    evidence.update(verdict=verdict, response=result.text)
    if verdict == "YES":
        return StageDecision(sample.sample_id, "keep", None, evidence)
    reason = ZERO_PASS_LLM_REJECT if verdict == "NO" else ZERO_PASS_PARSE_FAIL
    return StageDecision(sample.sample_id, "drop", reason, evidence)


def review_zero_pass(
    samples: Sequence[SampleView], client: LLMClient, config: ReviewConfig
) -> dict[str, StageDecision]:
    """One decision per sample; requests run concurrently and come from the cache on reruns."""
    if client.model != config.model:
        raise BenchsmithError(
            f"the review client asks {client.model!r} but the review config names {config.model!r}",
            fix="build the LLM client from the review config's model",
        )
    requests = [review_messages(sample, config) for sample in samples]
    results = client.complete_many(requests, max_tokens=config.max_tokens, desc="zero-pass review")
    decisions = {
        sample.sample_id: _review_decision(sample, result, config)
        for sample, result in zip(samples, results, strict=True)
    }
    return decisions


# -- human verdicts ------------------------------------------------------------------------------


def _verdict_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".csv") and p.is_file())
    if path.is_file():
        return [path]
    raise BenchsmithError(
        "human verdict file or folder not found",
        path=path,
        fix="create it (rows: sample_id, verdict, reviewer, note) or point to the right path",
    )


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    return read_jsonl(
        path,
        what="human verdicts",
        fix='write one object per line: {"sample_id": "...", "verdict": "accept"}',
    )


def _csv_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"sample_id", "verdict"} - set(reader.fieldnames or [])
        if missing:
            raise BenchsmithError(
                f"CSV header lacks {sorted(missing)}",
                path=f"{path}:1",
                fix="use the header: sample_id,verdict,reviewer,note",
            )
        for row in reader:
            if any((v or "").strip() for v in row.values() if isinstance(v, str)):
                yield reader.line_num, row


def _parse_verdict_row(row: Any, source: str) -> HumanVerdict:
    fix = 'each row needs "sample_id" and "verdict" ("accept" or "reject")'
    if not isinstance(row, dict):
        raise BenchsmithError("row is not an object", path=source, fix=fix)
    sample_id = row.get("sample_id")
    if sample_id is None or str(sample_id).strip() == "":
        raise BenchsmithError("row has no sample_id", path=source, fix=fix)
    verdict = str(row.get("verdict") or "").strip().lower()
    if verdict not in VERDICTS:
        raise BenchsmithError(
            f"unknown verdict {row.get('verdict')!r} (expected accept or reject)",
            path=source,
            fix=fix,
        )
    return HumanVerdict(
        sample_id=str(sample_id).strip(),
        verdict=verdict,  # type: ignore[arg-type]
        reviewer=str(row.get("reviewer") or ""),
        note=str(row.get("note") or ""),
        source=source,
    )


def read_human_verdicts(path: str | Path) -> dict[str, HumanVerdict]:
    """Verdicts from one ``.jsonl``/``.csv`` file, or every such file in a folder (sorted).

    A sample named twice with the same verdict is fine (the first row is kept); conflicting
    verdicts are an error naming both rows, since silently picking one would not be reviewable.
    """
    verdicts: dict[str, HumanVerdict] = {}
    for file in _verdict_files(Path(path)):
        rows = _csv_rows(file) if file.suffix == ".csv" else _jsonl_rows(file)
        for number, row in rows:
            verdict = _parse_verdict_row(row, f"{file}:{number}")
            previous = verdicts.get(verdict.sample_id)
            if previous is not None and previous.verdict != verdict.verdict:
                raise BenchsmithError(
                    f"sample {verdict.sample_id} is both {previous.verdict}ed "
                    f"({previous.source}) and {verdict.verdict}ed",
                    path=verdict.source,
                    fix="keep one verdict per sample_id",
                )
            verdicts.setdefault(verdict.sample_id, verdict)
    return verdicts


def apply_human_verdicts(
    decisions: Mapping[str, StageDecision], verdicts: Mapping[str, HumanVerdict]
) -> dict[str, StageDecision]:
    """Every human verdict overrides the LLM decision for its sample (or stands alone).

    Samples reviewed by humans only (no LLM decision, e.g. no review model configured) get a
    decision too, so pass only the verdicts of the samples under review.
    """
    out = dict(decisions)
    for sample_id in sorted(verdicts):
        human = verdicts[sample_id]
        decision = decisions.get(sample_id)
        llm = None
        if decision is not None:
            llm = {"action": decision.action, "reason": decision.reason, **decision.evidence}
        evidence = {
            "human": {
                "verdict": human.verdict,
                "reviewer": human.reviewer,
                "note": human.note,
                "source": human.source,
            },
            "llm": llm,
            "overrides_llm": decision is not None and (human.verdict == "accept") != decision.kept,
        }
        if human.verdict == "reject":
            out[sample_id] = StageDecision(sample_id, "drop", ZERO_PASS_HUMAN_REJECT, evidence)
        else:
            out[sample_id] = StageDecision(sample_id, "keep", None, evidence)
    return out
