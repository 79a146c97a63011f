"""Reading a model's reply as models write it: the extraction every multiple-choice scorer shares.

A reply is first **read** (:func:`read_reply`): full-width letters, digits and punctuation
folded to ASCII (NFKC: ``（Ａ）`` is ``(A)``); ``<think>...</think>`` blocks dropped (an
unclosed one: what follows its end); chat prefixes (``Assistant:``, ``GPT:``) dropped; Markdown
emphasis (``**A**``) and LaTeX wrappers (``\\boxed{}``, ``\\text{}``, ``$...$``) unwrapped, the
last ``\\boxed{}`` being the answer when there is one.

Then a letter is looked for, each step only when the previous found nothing:

1. **exact**: the reply is one option letter, alone or in brackets of any width and script
   (``B``, ``(B)``, ``[B]``, ``【B】``, ``B.``);
2. **cue**: the letter after the *last* answer cue, English or Chinese (``The answer is B``,
   ``Answer: (B)``, ``correct option is B``, ``故选A``, ``故选：A``, ``选A``, ``答案是A``,
   ``答案：A``); after an English cue a lower-case letter counts only in brackets ("the answer
   is a cat" is not A);
3. **leading**: the reply starts with a letter and a delimiter (``B. a cat``, ``B: ...``,
   ``(B) ...``, ``B、...``);
4. **bracketed**: exactly one distinct option letter appears in brackets in the reply;
5. **option text**: exactly one option's text appears in the reply **on word boundaries**
   (case, width and spacing ignored; an option whose every match lies inside another matched
   option's match does not count), or the reply is an option's text;
6. otherwise none, or **refusal** when the reply declines to answer ("I cannot determine",
   "无法确定", "image none"): counted as such, never sent to a judge.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

THINK = re.compile(r"<think>.*?</think>", re.S | re.IGNORECASE)
CHAT_PREFIX = re.compile(r"^\s*(?:assistant|gpt|model|bot|ai)\s*:\s*", re.IGNORECASE)
BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}", re.S)
LATEX_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
EMPHASIS = re.compile(r"(\*\*|__|`)")
OPEN, CLOSE = "([【〔<{", ")]】〕>}"
BRACKETED = re.compile(r"[(\[【〔<{]\s*([A-Za-z])\s*[)\]】〕>}]")
_EXACT_STRIP = " \t\r\n.,;:!?。，；：！？()[]{}<>【】〔〕*'\"“”‘’"
EN_CUE = re.compile(
    r"(?:(?:the\s+)?(?:correct|right|final|best)?\s*(?:answer|option|choice)\s*(?:is|would\s+be|"
    r"should\s+be|:)|answer\s*:|option|choice|i\s+(?:choose|pick|select))\s*:?\s*"
    r"(?:(?:option|choice)\s*)?(?:[(\[【]\s*([A-Za-z])\s*[)\]】]|([A-Z]))(?![A-Za-z])",
    re.IGNORECASE,
)
ZH_CUE = re.compile(
    r"(?:故选|应选|选择|(?:正确)?选项\s*(?:应该?[是为]|[是为])?|选|答案\s*(?:应该?[是为]|[是为])?)"
    r"\s*[:：]?\s*[(\[【]?\s*([A-Z])\s*[)\]】]?(?![A-Za-z])"
)
LEADING = re.compile(r"^\s*(?:[(\[【]\s*([A-Z])\s*[)\]】]|([A-Z])\s*[.:)、．])(?:\s|\S)")
REFUSALS = (
    "image none", "image error", "model error", "i cannot determine", "i can't determine",
    "cannot be determined", "unable to determine", "i cannot answer", "i can't answer",
    "i'm unable to", "i am unable to", "i cannot see the image", "cannot see the image",
    "image is missing", "no image was provided", "i'm sorry", "i am sorry", "无法确定",
    "无法判断", "无法回答", "缺少图片信息", "没有看到图片", "无法看到图片", "不能确定",
)  # fmt: skip


def read_reply(response: str | None) -> str:
    """The reply with what is not its answer taken away (see the module's docstring)."""
    text = unicodedata.normalize("NFKC", str(response or "")).replace("\u00a0", " ")
    text = THINK.sub("", text)
    if "</think>" in text.lower():  # an unclosed block: what follows its end
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    text = CHAT_PREFIX.sub("", text)
    boxed = BOXED.findall(text)
    if boxed:
        text = boxed[-1]
    for _ in range(3):  # nested wrappers: \boxed{\text{$\frac{1}{2}$}}
        text = LATEX_WRAP.sub(r"\1", text)
    text = EMPHASIS.sub("", text)
    if text.count("$") >= 2 and len(text.strip()) <= 40:
        text = text.replace("$", "")
    return text.strip()


def letters_for(options: Sequence[str]) -> str:
    return "".join(chr(ord("A") + k) for k in range(len(options)))


def normalise_text(text: str) -> str:
    """Case, width and spacing folded (how option texts are compared)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_refusal(response: str | None) -> bool:
    """The reply declines to answer (or is one of the failure strings releases write)."""
    text = normalise_text(read_reply(response)).replace("’", "'")
    return any(phrase in text for phrase in REFUSALS)


def extract_letter(response: str | None, options: Sequence[str]) -> tuple[str | None, str]:
    """(letter or None, the step that decided: exact | cue | leading | bracketed |
    option_text | refusal | none)."""
    text = read_reply(response)
    if not text:
        return None, "none"
    valid = letters_for(options)
    bare = text.strip(_EXACT_STRIP)
    if len(bare) == 1 and bare.upper() in valid:
        return bare.upper(), "exact"
    cued = _last_cue(text, valid)
    if cued:
        return cued, "cue"
    leading = LEADING.match(text)
    if leading and (leading.group(1) or leading.group(2)) in valid:
        return leading.group(1) or leading.group(2), "leading"
    bracketed = {m.group(1).upper() for m in BRACKETED.finditer(text)} & set(valid)
    if len(bracketed) == 1:
        return bracketed.pop(), "bracketed"
    by_text = option_in_text(text, options)
    if by_text is not None:
        return valid[by_text], "option_text"
    return None, ("refusal" if is_refusal(text) else "none")


def _last_cue(text: str, valid: str) -> str | None:
    found: list[tuple[int, str]] = []
    for match in EN_CUE.finditer(text):
        if match.group(2) and not match.group(2).isupper():
            continue  # "the answer is a cat": an article, not option A
        letter = (match.group(1) or match.group(2) or "").upper()
        if letter in valid:
            found.append((match.start(), letter))
    for match in ZH_CUE.finditer(text):
        if match.group(1) in valid:
            found.append((match.start(), match.group(1)))
    return max(found)[1] if found else None


def option_in_text(text: str, options: Sequence[str]) -> int | None:
    """The index of the one option whose text the reply holds on word boundaries, or is."""
    said = normalise_text(text).strip(" .。!")
    texts = [normalise_text(read_reply(o)).strip(" .。") for o in options]  # read as replies are
    equal = [k for k, t in enumerate(texts) if t and t == said]
    if len(equal) == 1:
        return equal[0]
    spans: dict[int, list[tuple[int, int]]] = {}
    for k, option in enumerate(texts):
        if not option:
            continue
        pattern = re.compile(rf"(?<![\w]){re.escape(option)}(?![\w])" if option[0].isascii()
                             else re.escape(option))  # fmt: skip
        found = [m.span() for m in pattern.finditer(said)]
        if found:
            spans[k] = found
    inside = {k for k, found in spans.items()
              if all(any(o != k and a <= s and e <= b and (a, b) != (s, e)
                         for o, other in spans.items() for a, b in other) for s, e in found)}  # fmt: skip
    matched = [k for k in spans if k not in inside]
    return matched[0] if len(matched) == 1 else None
