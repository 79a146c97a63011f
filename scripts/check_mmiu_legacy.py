"""Check ``benchsmith score --legacy`` for MMIU against the official scripts, sample by sample.

    python scripts/check_mmiu_legacy.py --mmiu-repo PATH/TO/OpenGVLab-MMIU [--dataset published/mmiu]

Needs a checkout of github.com/OpenGVLab/MMIU (its ``evaluate.py`` and ``evaluate_correct.py``;
nothing of it is copied here) and the ``openai`` package. For every sample of five configs it
writes several replies (exact letters, lower case, punctuation, NBSP, the failure strings, free
text that needs the judge, the empty string), then:

1. runs the official ``evaluate.process_data`` with its OpenAI client pointed at a local fake
   judge on 127.0.0.1 (replies chosen from each prompt's hash: letters, "A.", " ", text, Z, or
   an HTTP 400 that the official script turns into "GPT error");
2. runs the official ``evaluate_correct.py`` on one task folder per sample holding two anchor
   rows (one right, one wrong) and the sample, so the task's accuracy (2/3, 1/3 or 1/2) says
   whether the sample was right, wrong or dropped;
3. runs benchsmith's legacy verdicts with the same judge and compares. Exit 0 when every
   sample agrees (last run: 320 samples, 0 differences).
"""

import argparse
import csv
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from chat_server import ChatServer, Reply, Status  # noqa: E402

from benchsmith.scoring.mmiu import judge_client, load_gold, verdicts_legacy  # noqa: E402
from benchsmith.scoring.mmiu_parse import legacy_options_text  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--mmiu-repo", type=Path, required=True)
parser.add_argument("--dataset", type=Path, default=ROOT / "published" / "mmiu")
args = parser.parse_args()
WORK = Path(tempfile.mkdtemp(prefix="mmiu-legacy-"))
for name in ("evaluate.py", "evaluate_correct.py"):
    shutil.copy(
        args.mmiu_repo / name, WORK / name
    )  # run from a scratch folder, never imported into benchsmith
sys.path.insert(0, str(WORK))
import evaluate  # noqa: E402  the official script
import openai  # noqa: E402

DATASET = args.dataset
FORMS = [
    "{a}",
    "{l}",
    "({a}).",
    "\u00a0{a}",
    "model error",
    "",
    "The answer is {a}",
    "{a}. because it fits",
    "Z",
    "I think it is option {w}",
    "{w}",
    "image none",
    "{a}, {w}",
    " {l} ",
    "(({w}))",
    "copyrighted material",
]
JUDGE = ["A", "B", "C", "D", "A.", " ", "The answer is C", "Z", "ERR", "b"]


def judge_reply(body):
    text = body["messages"][0]["content"]
    text = text if isinstance(text, str) else "".join(p.get("text", "") for p in text)
    pick = JUDGE[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(JUDGE)]
    return Status(400) if pick == "ERR" else Reply(pick)


rows = []
for config in [
    "3d_pose_estimation",
    "jigsaw_puzzle_solving",
    "visual_correspondence_scannet",
    "image_spatial_transformation_estimation",
    "3d_object_detection",
]:
    for k, g in enumerate(load_gold(DATASET, config)):
        a = g["answer"]
        w = "B" if a == "A" else "A"
        for f, form in enumerate(FORMS):
            if (k + f) % 3:
                continue
            rows.append(
                {**g, "response": form.format(a=a, l=a.lower(), w=w), "sample": f"{g['id']}#{f}"}
            )
print("samples:", len(rows))

with ChatServer(reply=judge_reply) as server:
    real = openai.OpenAI
    evaluate.OpenAI = lambda **kw: real(base_url=server.base_url, api_key="k", max_retries=0)
    official_choice = {}
    for row in rows:
        data = {
            "options": legacy_options_text(row["options"]),
            "question": row["question"],
            "GPT4o": row["response"],
            "output": row["answer"],
        }
        official_choice[row["sample"]] = evaluate.process_data((dict(data), "GPT4o"))[
            "GPT4o_choice"
        ]
    # evaluate_correct.py on one folder per sample: anchors right + wrong, then the sample
    work = WORK / "xx"
    shutil.rmtree(work, ignore_errors=True)
    for n, row in enumerate(rows):
        folder = work / f"t{n:05d}" / "GPT4o"
        folder.mkdir(parents=True)
        anchors = [{"output": "A", "GPT4o_choice": "A"}, {"output": "A", "GPT4o_choice": "B"}]
        sample = {"output": row["answer"], "GPT4o_choice": official_choice[row["sample"]]}
        (folder / "metadata_info_choice.json").write_text(json.dumps(anchors + [sample]))
    out = subprocess.run(
        [sys.executable, str(WORK / "evaluate_correct.py")],
        cwd=WORK,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    table = {
        r[""]: r for r in csv.DictReader((WORK / "Accuracy_data_all.csv").read_text().splitlines())
    }
    official = {}
    for n, row in enumerate(rows):
        acc = float(table[f"t{n:05d}"]["GPT4o"])
        official[row["sample"]] = {2 / 3: "right", 1 / 3: "wrong", 0.5: "dropped"}[
            min((2 / 3, 1 / 3, 0.5), key=lambda v: abs(v - acc))
        ]
    # ours, with the same judge replies (each prompt answered the same way)
    client = judge_client("gpt-4o-mini", server.base_url, WORK / "cache", 512)
    ours = {}
    for row in rows:
        gold = [
            {k: row[k] for k in ("id", "task", "relationship", "question", "options", "answer")}
        ]
        v = verdicts_legacy(
            gold, {row["id"]: {"response": row["response"], "model": "GPT4o"}}, client
        )[row["id"]]
        ours[row["sample"]] = (
            "dropped" if v.get("dropped") else ("right" if v["correct"] else "wrong")
        )

diff = [
    (s, official[s], ours[s], repr(r["response"]), official_choice[s])
    for r in rows
    for s in [r["sample"]]
    if official[s] != ours[s]
]
print("official:", Counter(official.values()), "ours:", Counter(ours.values()))
print("per-sample differences:", len(diff))
for d in diff[:20]:
    print(d)
sys.exit(1 if diff else 0)
