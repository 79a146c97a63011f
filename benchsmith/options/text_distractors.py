"""Free-text distractors: plausible wrong answers written by an LLM, or drawn offline.

MMIU's captioning and reasoning tasks used GPT-4o distractors that a blind reader could tell
from the human-written gold (generic, opposite in tone, another length). Here:

- :func:`llm_text_distractors` asks the one LLM client (cached, so a rebuild sends nothing) for
  wrong answers *in the gold's style and length*, parses the JSON list it returns, and keeps
  only replies that differ from the gold and from each other (case and spaces ignored) and
  whose word count is within :data:`LENGTH_RATIO` of the gold's, so "longest option" cannot
  find the gold;
- :func:`pool_text_distractors` is the deterministic offline method (``llm: none``, or an LLM
  that fails or returns too few usable lines): other items' gold answers from the same config,
  preferring those closest to the gold's length, drawn by the seeded generator.

:func:`text_distractors` tries the LLM first and fills any shortfall from the pool; each option's
method is returned (``llm:<model>`` or ``pool_from_other_samples``) for ``option_methods``, and
a card states which one ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchsmith.options.distractors import DistractorError

LENGTH_RATIO = (0.75, 1.34)  # a distractor's word count / the gold's
POOL_METHOD = "pool_from_other_samples"
PROMPT = (
    "Write {n} wrong answers to this question. Each must be plausible, wrong, in the same style "
    "as the correct answer, and about as long ({words} words).\n"
    "Question: {question}\nCorrect answer: {gold}\n"
    'Reply with a JSON list of {n} strings only, e.g. ["...", "..."].'
)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _words(text: str) -> int:
    return len(text.split())


def similar_length(candidate: str, gold: str) -> bool:
    ratio = _words(candidate) / max(1, _words(gold))
    return LENGTH_RATIO[0] <= ratio <= LENGTH_RATIO[1]


def parse_reply(text: str | None) -> list[str]:
    """The strings of the first JSON list in ``text`` (fenced or not); [] when there is none."""
    if not text:
        return []
    match = re.search(r"\[.*\]", text, re.DOTALL)
    if not match:
        return []
    try:
        values = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    return [str(v).strip() for v in values if isinstance(v, str | int | float) and str(v).strip()]


def keep_usable(candidates: Sequence[str], gold: str, taken: Sequence[str], n: int) -> list[str]:
    seen = {_norm(gold), *(_norm(t) for t in taken)}
    out = []
    for candidate in candidates:
        key = _norm(candidate)
        if key in seen or not similar_length(candidate, gold):
            continue
        seen.add(key)
        out.append(candidate)
        if len(out) == n:
            break
    return out


def llm_text_distractors(question: str, gold: str, n: int, client: Any) -> list[str]:
    """Up to ``n`` usable LLM distractors (fewer when the reply fails or falls short)."""
    from benchsmith.core.llm_messages import user_message

    prompt = PROMPT.format(n=n + 2, words=_words(gold), question=question, gold=gold)
    result = client.complete([user_message(prompt)])
    return keep_usable(parse_reply(result.text if result.ok else None), gold, (), n)


def pool_text_distractors(
    gold: str, pool: Sequence[str], n: int, rng: np.random.Generator, taken: Sequence[str] = ()
) -> list[str]:
    """``n`` other golds of the pool, of similar length, drawn with ``rng`` (deterministic)."""
    candidates = sorted({p for p in pool if similar_length(p, gold)})
    picked = keep_usable([candidates[int(i)] for i in rng.permutation(len(candidates))], gold,
                         taken, n)  # fmt: skip
    if len(picked) < n:
        raise DistractorError(
            f"only {len(picked)} of {n} distractors of similar length for {gold!r} in the pool"
        )
    return picked


def text_distractors(
    question: str,
    gold: str,
    n: int,
    pool: Sequence[str],
    rng: np.random.Generator,
    client: Any = None,
) -> tuple[list[str], list[str]]:
    """(distractors, their methods): the LLM's first (when a client is given), the pool's for
    the rest."""
    chosen = llm_text_distractors(question, gold, n, client) if client is not None else []
    methods = [f"llm:{client.model}"] * len(chosen) if chosen else []
    if len(chosen) < n:
        extra = pool_text_distractors(gold, pool, n - len(chosen), rng, chosen)
        chosen += extra
        methods += [POOL_METHOD] * len(extra)
    return chosen, methods
