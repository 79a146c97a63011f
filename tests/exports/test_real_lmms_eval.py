"""The exports in the real lmms-eval: its own entry point, its own YAML loader, its own OpenAI
model class, against a chat server on 127.0.0.1 that knows every doc's gold.

Runs where lmms-eval is installed (``pip install -e '.[harness]'``: it needs torch, which CI
does not install) and is skipped, saying so, where it is not; ``test_lmms_eval.py`` checks the
same exports in every run with a loader that follows lmms-eval's rules.

The server recognises each request by what the model is shown (the texts, and each picture's
RGB pixels: lmms-eval's OpenAI model sends PNG, which is lossless) and answers the gold for
about half the docs (what the doc shows decides) and ``zz`` for the others. So the number lmms-eval
prints is checked three ways: it equals ``benchsmith score`` on the replies lmms-eval logged
(``--log_samples``), and ``benchsmith score`` on the replies the server meant to give each doc,
and it lies strictly between 0 and 1 (a run that lost the pairing of replies and docs, or
scored nothing, cannot pass).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "lmms_eval", reason="the real lmms-eval is an optional extra: pip install -e '.[harness]'"
)

import datasets  # noqa: E402
from chat_server import ChatServer, Reply  # noqa: E402
from PIL import Image  # noqa: E402

from benchsmith.cli import main  # noqa: E402
from benchsmith.scoring import SCORERS  # noqa: E402

WRONG = "zz"


def right_for(shown: str) -> bool:
    """Whether the server answers the gold to what a request shows (about half the docs)."""
    return hashlib.sha256(shown.encode()).digest()[0] % 2 == 1


def pixels(image: Image.Image) -> str:
    return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


def shown(content: list[dict]) -> tuple:
    """What one user message shows the model, as the server sees it: texts, and each
    picture's pixel hash (a ``data:`` URL of a PNG)."""
    seen = []
    for part in content:
        if part.get("type") == "text":
            seen.append(("text", part["text"]))
        elif part.get("type") == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            seen.append(("image", pixels(Image.open(io.BytesIO(data)))))
    return tuple(seen)


def docs_of(task_yaml: Path) -> list[dict]:
    """The task's docs, read by lmms-eval's own YAML loader, as its evaluator reads them."""
    from lmms_eval.utils import load_yaml_config

    config = load_yaml_config(str(task_yaml), mode="full")
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   split=config["test_split"])  # fmt: skip
    docs = config["process_docs"](loaded)
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    out = []
    for doc in docs:
        user = config["doc_to_messages"](doc, kwargs)[-1]["content"]
        seen = tuple(("text", c["text"]) if c["type"] == "text" else ("image", pixels(c["url"]))
                     for c in user)  # fmt: skip
        out.append({"key": doc["benchsmith_key"], "target": doc["target"], "shown": seen})
    return out


def answers_by_what_is_shown(docs: list[dict]) -> dict[tuple, str]:
    """What the server answers, by what a request shows. Docs that show the same with
    different golds get the wrong answer: no model can tell them apart (VL-ICL's two operator
    tasks show the same zero-shot query, whose operator only the demonstrations tell)."""
    golds: dict[tuple, set[str]] = {}
    for doc in docs:
        golds.setdefault(doc["shown"], set()).add(doc["target"])
    return {shown: next(iter(gold)) if len(gold) == 1 and right_for(repr(shown)) else WRONG
            for shown, gold in golds.items()}  # fmt: skip


def score(published: Path, config: str, replies: dict[str, str], tmp_path: Path,
          capsys) -> dict:  # fmt: skip
    """``benchsmith score`` on ``replies`` (doc key -> reply)."""
    path = tmp_path / f"{config}-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for key, reply in replies.items():
            handle.write(json.dumps({**json.loads(key), "response": reply}) + "\n")
    capsys.readouterr()
    assert main(["score", str(published), "--config", config, "--predictions", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def run_lmms_eval(tasks: Path, task: str, server: ChatServer, out: Path,
                  *extra: str) -> subprocess.CompletedProcess:  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "not-a-key", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
    command = [sys.executable, "-m", "lmms_eval", "eval", "--model", "openai", "--model_args",
               f"model_version=fake,base_url={server.base_url},num_concurrent=2,max_retries=1",
               "--include_path", str(tasks), "--tasks", task, "--log_samples",
               "--output_path", str(out), *extra]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


def results_of(out: Path, run: subprocess.CompletedProcess) -> tuple[dict, dict[str, list]]:
    """lmms-eval's results file and its logged samples per task (it exits 0 on an error, so
    a missing results file is the failure, shown with what it printed)."""
    found = sorted(out.rglob("*_results.json"))
    assert found, f"lmms-eval wrote no results:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    results = json.loads(found[-1].read_text(encoding="utf-8"))
    samples = {}
    for path in out.rglob("*_samples_*.jsonl"):
        task = path.stem.split("_samples_", 1)[1]
        samples[task] = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return results, samples


# what each family's export covers here: MMNeedle one single-image and one ten-image config
# of 2x2 grids (lmms-eval's OpenAI model sends every picture as PNG: the 8x8 haystacks of all
# 21 configs take it ten minutes), VL-ICL two shot counts and one seed, the others whole
EXPORTS = {
    "mmneedle": ("--config", "m1_n2_k1", "m10_n2_k2"),
    "vlicl": ("--shots", "0", "2", "--seeds", "0"),
    "mmiu": (),
    "multi": (),
}


@pytest.mark.parametrize("family", sorted(EXPORTS))
def test_real_lmms_eval_prints_what_benchsmith_score_prints(family, sample_project, tmp_path,
                                                            capsys):  # fmt: skip
    published = sample_project / "published" / family
    tasks = tmp_path / "tasks"
    assert main(["export", "lmms-eval", str(published), "--out", str(tasks),
                 *EXPORTS[family]]) == 0  # fmt: skip
    docs = {path.parent.name: docs_of(path) for path in sorted(tasks.glob("*/benchsmith_*.yaml"))}
    answers = answers_by_what_is_shown([d for task in docs.values() for d in task])
    unknown = []

    def reply(body: dict) -> Reply:
        seen = shown(body["messages"][-1]["content"])
        if seen not in answers:
            unknown.append(seen)
        return Reply(answers.get(seen, "unknown request"))

    with ChatServer(reply) as server:
        run = run_lmms_eval(tasks, f"benchsmith_{family}", server, tmp_path / "out")
        sent = len(server.requests)
    results, samples = results_of(tmp_path / "out", run)
    assert not unknown, f"{len(unknown)} request(s) showed what no doc shows"
    assert sent == sum(len(task) for task in docs.values())  # one request per doc, no retry
    scorer = SCORERS.get(family)
    metric = f"{family}_{scorer.headline.replace('.', '_')},none"
    headlines = []
    for config, config_docs in docs.items():
        task = f"benchsmith_{family}_{config}"
        printed = results["results"][task][metric]
        logged = {s[metric.split(",")[0]]["key"]: s[metric.split(",")[0]]["response"]
                  for s in samples[task]}  # fmt: skip
        assert sorted(logged) == sorted(d["key"] for d in config_docs)  # every doc ran once
        meant = {d["key"]: answers[d["shown"]] for d in config_docs}
        assert logged == meant  # each reply reached the doc the server answered
        report = score(published, config, logged, tmp_path, capsys)
        assert report.get("missing", 0) == 0
        assert printed == pytest.approx(scorer.headline_value(report)), (config, report)
        headlines.append(printed)
    assert min(headlines) > 0 and max(headlines) < 1, headlines
    group = results["results"][f"benchsmith_{family}"][metric]
    assert group == pytest.approx(sum(headlines) / len(headlines))  # the group: unweighted mean


def test_real_lmms_eval_with_limit_scores_the_unrun_docs_as_missing(sample_project, tmp_path,
                                                                     capsys):  # fmt: skip
    """``--limit N``: the number is the whole config's score, the docs not run counted wrong,
    as the docs say; the log says how many ran."""
    published = sample_project / "published" / "mmiu"
    tasks = tmp_path / "tasks"
    assert main(["export", "lmms-eval", str(published), "--out", str(tasks),
                 "--config", "jigsaw_puzzle_solving"]) == 0  # fmt: skip
    [task_yaml] = tasks.glob("*/benchsmith_*.yaml")
    docs = docs_of(task_yaml)
    answers = answers_by_what_is_shown(docs)
    with ChatServer(lambda body: Reply(answers[shown(body["messages"][-1]["content"])])) as server:
        run = run_lmms_eval(tasks, "benchsmith_mmiu_jigsaw_puzzle_solving", server,
                            tmp_path / "out", "--limit", "5")  # fmt: skip
    results, samples = results_of(tmp_path / "out", run)
    [logged] = samples.values()
    assert len(logged) == 5 < len(docs)
    replies = {s["mmiu_overall_accuracy"]["key"]: s["mmiu_overall_accuracy"]["response"]
               for s in logged}  # fmt: skip
    report = score(published, "jigsaw_puzzle_solving", replies, tmp_path, capsys)
    assert report["missing"] == len(docs) - 5
    printed = results["results"]["benchsmith_mmiu_jigsaw_puzzle_solving"]
    headline = SCORERS.get("mmiu").headline_value(report)
    assert printed["mmiu_overall_accuracy,none"] == pytest.approx(headline)
    assert f"ran 5 of the task's {len(docs)} docs" in run.stdout + run.stderr
