"""A MULTI question as a run sends it (written as ``question_id``) and as a harness takes it
(:func:`multi_harness_rows`).

MULTI's own evaluation prompts in Chinese: a system prompt with the role, the knowledge keyword
and the question type, and a strict answer-format rule. Ours says the same in our words: the
question's images (in ``[IMAGE_n]`` order; the text names them), the question text (stem,
options, ``[MASK]`` blanks), and one line on how to answer for its type, so the reply is one the
scorer reads (letters for SA/MA, one line per blank for FB).
"""

from __future__ import annotations

from collections.abc import Iterator

from benchsmith.builders.multi.config import QUESTION_TYPES
from benchsmith.family.requests import HarnessRow, PredictionRequest, RequestSource

SYSTEM = "你是一名{subject}学科的考试答题助手。请认真阅读题目（可能包含图片），给出答案。"
ANSWER_FORMAT = {
    "SA": "这是一道单选题，请在最后一行写出“答案是X”，X为唯一正确选项的字母。",
    "MA": "这是一道多选题，请在最后一行写出“答案是XY”，列出所有正确选项的字母。",
    "FB": "这是一道填空题，请按顺序写出每个[MASK]处的答案，每行一个，不要写其他内容。",
    "OP": "这是一道解答题，请写出解答过程和最终答案。",
    "Other": "请作答。",
}


def multi_requests(source: RequestSource, columns) -> Iterator[PredictionRequest]:
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    for sample in view.iter_samples(with_images=not source.options.text_only):
        row = sample.row
        kind = QUESTION_TYPES[row["question_type"]]
        subject = row["knowledge"][0] if row["knowledge"] else row["subject"]
        instruction = source.options.instruction
        rule = ANSWER_FORMAT[kind] if instruction is None else instruction
        text = "\n".join(t for t in (row["text"], rule) if t)
        yield PredictionRequest({"question_id": row["question_id"]},
                                (*sample.images, text), SYSTEM.format(subject=subject))  # fmt: skip


def multi_harness_rows(source: RequestSource, columns) -> Iterator[HarnessRow]:
    """SA as multiple choice (the stem before its option lines, options, the letter) and FB as
    short answer (the blanks' answers, one per line); MA, OP and Other have no single-turn gold
    a harness scores the paper's way, so they are left out (``export`` counts them). Category
    the level (JuH, SeH, Uni, Driving, AAT), l2 the subject."""
    from benchsmith.builders.multi.config import EDUCATION, TRACKS
    from benchsmith.builders.multi.questions import parse_options
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    for sample in view.iter_samples():
        row = sample.row
        kind = QUESTION_TYPES[row["question_type"]]
        if kind not in ("SA", "FB") or row["answer"] is None:
            continue
        level = EDUCATION[row["education"]]
        level = TRACKS[row["track"]] if level == "Society" else level
        if kind == "SA":
            stem, _ = parse_options(row["question_content"])
            question = "\n".join(t for t in (row["problem_content"], stem) if t)
            options = tuple(o["text"] for o in row["options"])
        else:
            question, options = row["text"], ()
        yield HarnessRow(row["question_id"], question, tuple(sample.images), row["answer"],
                         options, level, row["subject"])  # fmt: skip
