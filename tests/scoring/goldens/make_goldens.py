"""Write the reply goldens: reply forms as models write them, each with the verdict a reader
gives it (``python tests/scoring/goldens/make_goldens.py`` rewrites the JSONL files).

Each form is written with the answer it carries, so the expected verdict is the one the form
was made to say, not what the scorer returns: ``故选{L}`` chooses ``L``, ``image none`` declines,
``{T1} or {T2}`` chooses nothing. The files are committed and read by ``test_goldens.py``; a
change of verdict is a reviewed change of this file and of the JSONL files it writes.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in "ABCDEFGHIJ0123456789"}

# forms that choose letter L (T: that option's text, l: the letter in lower case)
CHOOSING = (
    "{L}", "{L}.", "({L})", "[{L}]", "**{L}**", "\\boxed{{{L}}}", "$\\boxed{{{L}}}$", "{l}",
    "({l})", "（{L}）", "【{L}】", "{W}", "（{W}）", "The answer is {L}.", "The answer is ({L}).",
    "The answer is ({l}).", "Answer: {L}", "Answer: ({L})", "answer: {L}",
    "The correct option is {L}.", "The correct answer is **{L}**.", "I choose option {L}.",
    "Option {L}", "{L}. {T}", "({L}) {T}", "{L}: {T}", "Assistant: {L}",
    "ASSISTANT: The answer is {L}", "<think>Let me compare the images one by one.</think>\n{L}",
    "<think>(A) looks plausible at first, but no.</think>The answer is {L}",
    "Based on the images, the answer is {L}.",
    "Looking at each option in turn, (X) and (Y) do not fit. The final answer is: {L}",
    "{T}", "The answer is {T}.", "It is {T}.", "答案：{L}", "答案是{L}", "答案是 {L}。", "故选{L}",
    "故选：{L}", "选{L}", "应选{L}。", "正确选项是{L}", "经过比较，答案为（{L}）。",
)  # fmt: skip
# forms that choose nothing: (form, kind) with kind "refusal" or "none"
DECLINING = (
    ("image none", "refusal"), ("I cannot determine the answer from the images.", "refusal"),
    ("I'm sorry, I can't answer this question.", "refusal"), ("无法确定。", "refusal"),
    ("缺少图片信息，无法回答。", "refusal"), ("The answer is a mystery to me.", "none"),
    ("{T1} or {T2}", "none"), ("", "none"), ("Z", "none"), ("The images are too blurry", "none"),
)  # fmt: skip

MMIU_OPTIONS = (
    ["The 1st image", "The 2nd image", "The 3rd image", "The 12th image"],
    ["0.53", "1.27", "2.05", "3.10"],
    ["table", "unstable", "chair", "stable cart"],
    ["rotate 90 degrees clockwise", "rotate 90 degrees counterclockwise", "flip horizontally",
     "no change"],
)  # fmt: skip
MULTI_OPTIONS = (
    ["光合作用", "呼吸作用", "蒸腾作用", "吸收作用"],
    ["$x=1$", "$x=2$", "$x=3$", "$x=4$"],
    ["北京", "上海", "广州", "深圳"],
)


def fill(form: str, options: list[str], k: int) -> str:
    letter = chr(ord("A") + k)
    others = [i for i in range(len(options)) if i != k]
    x, y = (chr(ord("A") + i) for i in others[:2])
    return form.format(L=letter, l=letter.lower(), W=FULL_WIDTH[letter], T=options[k],
                       T1=options[others[0]], T2=options[others[1]]).replace(
        "(X)", f"({x})").replace("(Y)", f"({y})")  # fmt: skip


def single_choice(option_sets) -> list[dict]:
    rows = []
    for options in option_sets:
        for k in range(len(options)):
            for form in CHOOSING:
                if "(A) looks" in form and k == 0:
                    continue  # the thought names the same letter: not a contrast
                rows.append({"form": form, "reply": fill(form, options, k), "options": options,
                             "expected": chr(ord("A") + k), "kind": "answer"})  # fmt: skip
        for form, kind in DECLINING:
            rows.append({"form": form, "reply": fill(form, options, 0), "options": options,
                         "expected": None, "kind": kind})  # fmt: skip
    return rows


MA_CHOOSING = ("{S}", "{C}", "{D}", "{J}", "{P}", "{B}", "故选{S}", "答案：{S}", "答案是{C}",
               "The answer is {S}.", "The answer is {D}.", "**{S}**", "\\boxed{{{S}}}",
               "Assistant: {S}", "<think>Maybe only A.</think>{S}", "（{S}）")  # fmt: skip
MA_GOLDS = ("AC", "BD", "ABC", "BCD", "AD", "ABCD")


def multiple_choice() -> list[dict]:
    rows = []
    options = MULTI_OPTIONS[0]
    for gold in MA_GOLDS:
        for chosen in sorted({gold, gold[:-1], gold[1:], "".join(sorted(set(gold + "B")))}):
            forms = {"S": chosen, "C": ", ".join(chosen), "D": "、".join(chosen),
                     "J": "和".join(chosen), "P": "".join(f"({c})" for c in chosen),
                     "B": " ".join(chosen)}  # fmt: skip
            right = set(chosen) <= set(gold)
            points = len(chosen) if right else 0
            for form in MA_CHOOSING:
                rows.append({"form": form, "reply": form.format(**forms), "options": options,
                             "type": "MA", "gold": gold, "points": points,
                             "possible": len(gold), "kind": "answer"})  # fmt: skip
        for form in ("AC and B", "无法确定", "", "答案：不知道"):
            rows.append({"form": form, "reply": form, "options": options, "type": "MA",
                         "gold": gold, "points": 0, "possible": len(gold), "kind": "none"})  # fmt: skip
    return rows


FB_CASES = (  # (reply form, gold, right)
    ("{G}", True), ("Assistant:{G}", True), ("Assistant: {G}", True), ("答案：{G}", True),
    ("答案是{G}。", True), ("The answer is {G}.", True), ("\\boxed{{{G}}}", True),
    ("\\boxed{{\\text{{{G}}}}}", True), ("${G}$", True), ("{W}", True), ("  {G}  ", True),
    ("<think>Compute step by step.</think>{G}", True), ("{G}0", False), ("无法确定", False),
    ("", False),
)  # fmt: skip
FB_GOLDS = ("1", "25", "3/4", "\\frac{1}{2}", "光合作用", "x+1", "-7", "0.5", "北京", "2")


def blanks() -> list[dict]:
    rows = []
    for gold in FB_GOLDS:
        wide = "".join(FULL_WIDTH.get(c, c) for c in gold)
        for form, right in FB_CASES:
            reply = form.format(G=gold, W=wide)
            kind = "answer" if form.strip() and "无法" not in form else "none"
            rows.append({"form": form, "reply": reply, "options": [], "type": "FB", "gold": gold,
                         "points": int(right), "possible": 1, "kind": kind})  # fmt: skip
    fractions = ("\\boxed{\\text{$\\frac{1}{2}$}}", "$\\dfrac{1}{2}$", "1/2", "1/3")
    for reply, right in zip(fractions, (True, True, True, False), strict=True):
        rows.append({"form": reply, "reply": reply, "options": [], "type": "FB",
                     "gold": "\\frac{1}{2}", "points": int(right), "possible": 1,
                     "kind": "answer"})  # fmt: skip
    return rows


# MMNeedle: a K-needle answer written as models write it; {A} is the answer ("2, 1, 3")
NEEDLE_FORMS = (
    "{A}", "{A}.", "({A})", "[{A}]", "**{A}**", "`{A}`", "```\n{A}\n```", "Answer: {A}",
    "Answer: ({A})", "The answer is {A}.", "The answer is: **{A}**", "Assistant: {A}",
    "ASSISTANT: Answer: {A}", "<think>Image 4, row 1, column 1 looks close, but no.</think>{A}",
    "<think>Checking each image.</think>\nThe answer is {A}.", "\\boxed{{{A}}}", "{F}",
    "{A}\nThe caption matches that cell.", "The needle is at {A}.", "{L}",
    "It is in {L}.", "{C}",
)  # fmt: skip
NEEDLES_ABSENT = ("-1", "-1.", "Answer: -1", "**-1**", "The answer is -1.", "Assistant: -1",
                  "<think>None of the 4 images match.</think>-1", "\\boxed{{-1}}")  # fmt: skip
NEEDLES_UNCLEAR = ("", "I don't know", "1, 2", "2, 1, 3 or 4, 1, 1", "image 2, row 1",
                   "somewhere in image 3")  # fmt: skip


def needle_text(location: tuple[int, int, int], style: str) -> str:
    i, r, c = location
    return {"A": f"{i}, {r}, {c}", "F": "".join(FULL_WIDTH.get(ch, ch) for ch in f"{i}, {r}, {c}"),
            "L": f"image {i}, row {r}, column {c}", "C": f"{i},{r},{c}"}[style]  # fmt: skip


def mmneedle() -> list[dict]:
    import random

    rng = random.Random(0)
    rows = []
    for k in (1, 2):
        for _ in range(16 if k == 1 else 6):
            needles = [(rng.randint(1, 10), rng.randint(1, 4), rng.randint(1, 4)) for _ in range(k)]
            for form in NEEDLE_FORMS:
                answer = {style: "; ".join(needle_text(n, style) for n in needles)
                          for style in "AFLC"}  # fmt: skip
                rows.append({"form": form, "reply": form.format(**answer), "needles": k,
                             "expected": [list(n) for n in needles], "kind": "answer"})  # fmt: skip
        for form in NEEDLES_ABSENT:
            reply = (
                form if k == 1 or "-1" not in form else form.replace("-1", "; ".join(["-1"] * k))
            )
            rows.append({"form": form, "reply": reply.replace("{{", "{").replace("}}", "}"),
                         "needles": k, "expected": [None] * k, "kind": "absent"})  # fmt: skip
        for form in NEEDLES_UNCLEAR:
            rows.append({"form": form, "reply": form, "needles": k, "expected": None,
                         "kind": "none"})  # fmt: skip
    return rows


# VL-ICL: per answer kind, golds and the forms a reply takes ({g}: the gold as written, {w}: as
# a word, {f}: full-width digits); each form says the gold
VLICL_FORMS = {
    "operator": ("{g}", "{g}.", "The answer is {g}.", "Answer: {g}", "Answer:\n{g}", "**{g}**",
                 "\\boxed{{{g}}}", "Assistant: {g}", "<think>2 + 3 = 5, then 4 x 2 = 8.</think>{g}",
                 "{f}", "{g}\nThe operator multiplies.", "The result is {g}"),
    "count": ("{g}", "{w}", "There are {w} objects.", "{g} objects", "Answer: {g}", "**{g}**",
              "\\boxed{{{g}}}", "<think>I count 1, 2 and 9 cubes.</think>{g}", "Assistant: {g}",
              "{f}", "The answer is {w}.", "{W}"),
    "label": ("{g}", "{G}", "{g}.", "a {g}", "This is a {g}.", "\"{g}\"", "Answer: {g}",
              "The answer is {g}.", "**{g}**", "Assistant: {g}",
              "<think>The first image was a zorp.</think>{g}", "Answer: **{G}**"),
    "yes_no": ("{g}", "{l}.", "{g}, they show the same class.", "Answer: {g}", "**{g}**",
               "Assistant: {g}", "<think>No... wait, yes? Let me look again.</think>{g}",
               "The answer is {l}.", "{G}"),
}  # fmt: skip
VLICL_GOLDS = {
    "operator": [str(v) for v in (-12, -5, -1, 0, 3, 7, 12, 24, 56, 81, 100, 144)],
    "count": [str(v) for v in range(0, 11)],
    "label": ["dax", "blicket", "perpo", "shously", "slation", "wug", "tufa", "zup", "fep",
              "moxen"],
    "yes_no": ["Yes", "No"],
}  # fmt: skip
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
TASK_OF = {"operator": "operator_induction", "count": "clevr", "label": "open_mi",
           "yes_no": "matching_mi"}  # fmt: skip


def vlicl() -> list[dict]:
    rows = []
    for kind, forms in VLICL_FORMS.items():
        for gold in VLICL_GOLDS[kind]:
            word = WORDS[int(gold)] if kind == "count" else gold
            values = {"g": gold, "w": word, "W": word.capitalize(), "G": gold.upper(),
                      "l": gold.lower(), "f": "".join(FULL_WIDTH.get(c, c) for c in gold)}  # fmt: skip
            for form in forms:
                rows.append({"form": form, "reply": form.format(**values), "task": TASK_OF[kind],
                             "gold": gold, "right": True})  # fmt: skip
            if kind in ("operator", "count"):
                other = str(int(gold) + 1)
                for form in ("{g} or {o}", "between {g} and {o}", "", "I cannot tell"):
                    rows.append({"form": form, "reply": form.format(g=gold, o=other),
                                 "task": TASK_OF[kind], "gold": gold, "right": False})  # fmt: skip
    return rows


def main() -> None:
    mmiu = single_choice(MMIU_OPTIONS)
    # MULTI single choice: the gold is the letter the form chooses (1 point), or A (0 points)
    multi = [{**row, "type": "SA", "gold": row["expected"] or "A",
              "points": int(row["expected"] is not None), "possible": 1}
             for row in single_choice(MULTI_OPTIONS)] + multiple_choice() + blanks()  # fmt: skip
    written = (("mmiu_replies.jsonl", mmiu), ("multi_replies.jsonl", multi),
               ("mmneedle_replies.jsonl", mmneedle()), ("vlicl_replies.jsonl", vlicl()))  # fmt: skip
    for name, rows in written:
        with (HERE / name).open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name}: {len(rows)} replies")


if __name__ == "__main__":
    main()
