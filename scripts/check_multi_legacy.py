"""Check the MULTI ``--legacy`` rules against the official ``eval/metrics.py``, question by question.

    python scripts/check_multi_legacy.py --multi-repo PATH/TO/OpenDFM-MULTI-Benchmark

Needs a checkout of github.com/OpenDFM/MULTI-Benchmark (nothing of it is copied here) and
``jieba`` and ``rouge_chinese``. It writes a label file and a prediction file of generated
questions (every type, replies in many forms: letters first and last, prose, ``\\boxed``,
``<think>``, ``答案为：``, blank lines, ``、``-separated letters, ``；`` blanks, alternatives with
``或``, LaTeX, the rejection phrase, empty replies, questions without a label), runs the
official ``evaluate_every_problem`` on them from a scratch folder for both ``answer_position``
values (matplotlib, which only its plots need, is stubbed when absent), reads its
``score.json``, and compares every question's score and total with
:func:`benchsmith.scoring.multi_legacy.legacy_score`. Exit 0 when all agree.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
import types
from pathlib import Path

from benchsmith.scoring.multi_legacy import legacy_score

REPLIES = {
    "单选": ["B", "b", "The answer is B", "答案为：C", "A\n\nB", "<think>A</think>B", "xyz",
             "\\boxed{\\text{D}}", "", "缺少图片信息", "选B", "Assistant: A", "我的分析如下：C"],
    "多选": ["ACE", "A, C", "A、C", "ABCE", "ace", "answer: AC", "The answer is A and C",
             "\\boxed{\\text{AC}}", "BD", "", "A C E", "C,A", "缺少图片信息 AC", "答案为：A、E"],
    "填空": ["1\n二", "1；2", "1;2", "$1$\n$2$", "1", "1\n\n2", "一\n二", "", "3\n2",
             "1 \n 2或二", "缺少图片信息"],
    "解答": ["合力为 1 N", "由牛顿第二定律 F = ma 得 F = 1 N。", "", "不知道", "答案为：1 N"],
    "其他": ["画图", ""],
}  # fmt: skip
LABELS = {"单选": "B", "多选": "ACE", "填空": "1\n2或二", "解答": "合力为 1 N，由 F = ma 得 1 N。",
          "其他": "略"}  # fmt: skip


def build(folder: Path) -> tuple[dict, dict]:
    labels, predictions = {}, {}
    for k, (kind, replies) in enumerate(REPLIES.items()):
        for n, reply in enumerate(replies):
            problem = f"t{k}x_{n}"
            labels[problem] = {"problem_answer_list": [LABELS[kind]], "problem_type_list": [kind],
                               "problem_analysis_list": [""], "education": "高中",
                               "subject": ["物理"]}  # fmt: skip
            predictions[f"{problem}_0"] = {"question_id": f"{problem}_0", "prediction": reply,
                                           "question_image_number": n % 3}  # fmt: skip
    labels["nolabel_0"] = {"problem_answer_list": [], "problem_type_list": [],
                           "problem_analysis_list": [""], "education": "高中", "subject": ["物理"]}  # fmt: skip
    predictions["nolabel_0_0"] = {"question_id": "nolabel_0_0", "prediction": "B",
                                  "question_image_number": 0}  # fmt: skip
    return labels, predictions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--multi-repo", type=Path, required=True)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="multi-legacy-"))
    for name in ("metrics.py", "args.py", "utils.py"):
        shutil.copy(args.multi_repo / "eval" / name, work / name)
    sys.path.insert(0, str(work))
    try:
        importlib.import_module("matplotlib.pyplot")
    except ImportError:  # only the official plots use it
        plt = types.ModuleType("matplotlib.pyplot")
        sys.modules["matplotlib"] = types.ModuleType("matplotlib")
        sys.modules["matplotlib.pyplot"] = plt
    metrics = importlib.import_module("metrics")  # the official script
    labels, predictions = build(work)
    (work / "label.json").write_text(json.dumps(labels, ensure_ascii=False), encoding="utf-8")
    differences, checked = [], 0
    for position in ("start", "end"):
        run = work / position
        run.mkdir()
        prediction_file = run / "prediction.json"
        prediction_file.write_text(json.dumps(predictions, ensure_ascii=False), encoding="utf-8")
        options = types.SimpleNamespace(
            prediction_file=str(prediction_file), reference_file=None,
            label_file=str(work / "label.json"), detail_file=str(run / "detail.json"),
            answer_position=position,
        )  # fmt: skip
        metrics.evaluate_every_problem(options)
        official = json.loads((run / "score.json").read_text(encoding="utf-8"))
        for qid, item in predictions.items():
            problem = qid.rsplit("_", 1)[0]
            record = labels[problem]
            label = record["problem_answer_list"][0] if record["problem_answer_list"] else None
            kind = record["problem_type_list"][0] if record["problem_type_list"] else "其他"
            ours = legacy_score(item["prediction"], label, kind, position)[:2]
            theirs = (official[qid]["score"], official[qid]["total_score"])
            checked += 1
            if abs(ours[0] - theirs[0]) > 1e-9 or ours[1] != theirs[1]:
                differences.append((position, qid, kind, item["prediction"], ours, theirs))
    print(f"questions checked: {checked} (both answer positions); per-question differences: "
          f"{len(differences)}")  # fmt: skip
    for row in differences[:20]:
        print(row)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
