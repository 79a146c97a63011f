"""The task prompt sent to a model for one sample, in the lmms-eval conventions.

``benchsmith predict`` and the text-only leakage check must ask *the same* question, or a
"text-only answerable" verdict would say nothing about the prompt the judges saw. The suffixes
are the lmms-eval ``post_prompt`` defaults that LIME's ``*_suit`` tasks reuse:

- multiple choice: the question, then one ``A. choice`` line per option, then
  ``Answer with the option's letter from the given choices directly.``
- open question: the question, then ``Answer the question using a single word or phrase.``

A benchmark with its own instruction (captioning, MMNeedle coordinates) passes ``instruction``,
which replaces the suffix; the option lines are kept.
"""

from __future__ import annotations

import string

OPTION_LETTERS = string.ascii_uppercase
MCQ_INSTRUCTION = "Answer with the option's letter from the given choices directly."
OPEN_INSTRUCTION = "Answer the question using a single word or phrase."


def option_letter(index: int) -> str:
    if not 0 <= index < len(OPTION_LETTERS):
        raise ValueError(f"option index {index} has no letter (at most 26 options)")
    return OPTION_LETTERS[index]


def render_options(choices: list[str]) -> str:
    """``A. first\\nB. second`` ..."""
    return "\n".join(f"{option_letter(i)}. {choice}" for i, choice in enumerate(choices))


def render_prompt(
    question: str, choices: list[str] | None, *, instruction: str | None = None
) -> str:
    """Question, option lines (if any choices) and the instruction, one per line.

    An empty ``choices`` list counts as an open question. An empty ``instruction`` ("") means
    no instruction line at all.
    """
    lines = [question.strip()]
    if choices:
        lines.append(render_options([str(c) for c in choices]))
    if instruction is None:
        instruction = MCQ_INSTRUCTION if choices else OPEN_INSTRUCTION
    if instruction:
        lines.append(instruction)
    return "\n".join(line for line in lines if line)
