"""The official MULTI scorer (``eval/metrics.py`` of OpenDFM/MULTI-Benchmark), rule for rule.

For ``--legacy``, so a score can be compared with published numbers. Per question:

- **cleanup** (:func:`legacy_cleanup`): strip; keep the text after the last blank line; cut
  before ``Thought，持续 N 秒``, ``答案为：`` and ``</think>`` (the last part is kept); delete
  ``Assistant:``, ``assistant:``, ``answer:``, ``答案：``, ``user\\n``, ``我的分析如下：``;
  unwrap ``\\boxed{\\text{...}}``;
- **SA** (单选): the first (``answer_position`` ``start``, the code's default) or last (``end``,
  the README's) ASCII letter, upper-cased, equals the label: 1 of 1;
- **MA** (多选): the first or last run of ``[A-Za-z ,]`` holding a letter, upper-cased, spaces
  and commas removed, de-duplicated in order; one point per letter in the label, zero at the
  first letter not in it; out of the label's length (``A、C`` is two runs: only ``A`` counts);
- **FB** (填空): ``$`` and spaces removed, ``;``/``；`` to line breaks, line *i* against label
  line *i*, exactly or any ``或`` alternative; out of the label's line count;
- **OP** (解答): ROUGE-L F of jieba tokens (``rouge_chinese``), out of 1; an empty label is
  0 of 0, an empty reply 0 of 1;
- **Other** (其他) and a question without a label: 0 of 0;
- **rejection**: a reply containing ``缺少图片信息`` scores 0 (its total stays).

What it cannot reproduce: the ``--reference_file`` path (it raises a TypeError in the original)
and the rejection rates printed over hard-coded denominators (we report the counts).
"""

from __future__ import annotations

import re

REJECTION = "缺少图片信息"
POSITIONS = ("start", "end")
BOXED_TEXT = re.compile(r"\\boxed\\?\{\\text\\?\{(.+?)\\?\}\\?\}", re.S)
DELETED = ("Assistant:", "assistant:", "answer:", "答案：", "user\n", "我的分析如下：")


def legacy_cleanup(prediction: str) -> str:
    text = prediction.strip()
    text = re.split(r"\n\n", text)[-1].strip()
    for marker in (r"Thought，持续 [0-9]+ 秒", r"答案为：", r"</think>"):
        if re.findall(marker, text):
            text = re.split(marker, text)[-1].strip()
    for junk in DELETED:
        text = text.replace(junk, "")
    text = text.strip()
    boxed = BOXED_TEXT.search(text)
    return boxed.group(1).strip() if boxed else text


def _pick(matches: list[str], position: str) -> str:
    return matches[0] if position == "start" else matches[-1]


def legacy_single(prediction: str, label: str, position: str = "start") -> tuple[float, float]:
    letters = re.findall(r"[a-zA-Z]", prediction)
    if not letters:
        return 0, 1
    return (1 if _pick(letters, position).upper() == label else 0), 1


def legacy_multiple(prediction: str, label: str, position: str = "start") -> tuple[float, float]:
    runs = re.findall(r"[a-zA-Z ,]*[a-zA-Z]+[a-zA-Z ,]*", prediction)
    score = 0
    if runs:
        answer = _pick(runs, position).upper().replace(" ", "").replace(",", "").replace("、", "")
        for choice in "".join(sorted(set(answer), key=answer.index)):
            if choice in label:
                score += 1
            else:
                score = 0
                break
    return score, len(label)


def legacy_blanks(prediction: str, label: str) -> tuple[float, float]:
    text = re.sub(r"\n\n+", "\n", prediction)
    lines = (
        text.replace("$", "").replace(" ", "").replace(";", "\n").replace("；", "\n").split("\n")
    )
    gold = label.replace("$", "").replace(" ", "").split("\n")
    score = 0
    for given, expected in zip(lines, gold, strict=False):
        if given.strip() == expected.strip():
            score += 1
        else:
            alternatives = [a.strip() for a in expected.split("或")]
            if len(alternatives) > 1 and given.strip() in alternatives:
                score += 1
    return score, len(gold)


def legacy_open(prediction: str, label: str) -> tuple[float, float]:
    import jieba
    from rouge_chinese import Rouge

    said = " ".join(jieba.cut(prediction))
    gold = " ".join(jieba.cut(label))
    if gold == "":
        return 0, 0
    if said == "":
        return 0, 1
    return Rouge().get_scores(said, gold, avg=True)["rouge-l"]["f"], 1


def legacy_score(
    prediction: str, label: str | None, question_type: str, position: str = "start"
) -> tuple[float, float, bool]:
    """(score, total, rejected) of one question as the official script computes them.
    ``label`` None (no answer in the label file) scores as an Other question."""
    text = legacy_cleanup(prediction or "")
    if label is None:
        return 0, 0, REJECTION in text
    label = label.strip()
    if question_type == "单选":
        score, total = legacy_single(text, label, position)
    elif question_type == "多选":
        score, total = legacy_multiple(text, label, position)
    elif question_type == "填空":
        score, total = legacy_blanks(text, label)
    elif question_type == "解答":
        score, total = legacy_open(text, label)
    else:
        score, total = 0, 0
    rejected = REJECTION in text
    return (0 if rejected else score), total, rejected
