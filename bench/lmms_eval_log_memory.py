"""Memory of an lmms-eval run with ``--log_samples`` over an exported task's docs: flat, or
growing with the number of docs?

Why: with ``--log_samples`` lmms-eval keeps, for every doc it scores, the doc less the values its
``is_multimodal_content`` calls media (``lmms_eval/evaluator.py`` and ``utils.py``, read at
75571cfe), until the run ends. benchsmith 0.1's docs held their decoded pictures inside the
list of ``parts``, which that rule keeps: lmms-eval measured 8.0 GB resident on MMNeedle's docs
with logging, 1.2 GB without. The docs now hold encoded pictures under ``images: {"bytes": ...}``,
which the rule drops, decoded only when a model asks (``doc_to_visual``).

lmms-eval itself needs torch (the ``[harness]`` extra), so by default this script replays what
its evaluator does with each doc, in a fresh process per mode, and reports the peak resident memory
(``VmHWM``) and its growth over the process before the docs were read:

* ``no logging``: every doc's pictures decoded (the model's ``doc_to_visual``), nothing kept;
* ``logging``: the same, and the logged doc kept as lmms-eval keeps it (this layout);
* ``logging, 0.1 layout``: the same, the logged doc holding its decoded pictures in ``parts``
  as 0.1's docs did (the baseline, in the same run).

``--real`` runs the real lmms-eval instead, with and without ``--log_samples``, against a
chat server on 127.0.0.1, and reports its peak resident memory (~4 minutes).

Run ``python bench/lmms_eval_log_memory.py`` (~1 minute: the sample VL-ICL's queries at 0, 2
and 4 shots and seeds 0-2, 1,332 docs with 1-5 pictures each; ``--dataset`` another published
folder). Results go to ``bench/results/
lmms_eval_log_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_coco import machine_info, print_table, write_result

NAME = "lmms_eval_log_memory"
MODES = ("no logging", "logging", "logging, 0.1 layout")
ROOT = Path(__file__).resolve().parents[1]


def peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def is_media(value) -> bool:
    """lmms-eval's ``is_multimodal_content``, torch aside."""
    import numpy as np
    from PIL import Image

    if isinstance(value, bytes | bytearray | np.ndarray | Image.Image):
        return True
    return isinstance(value, dict) and ("array" in value or "bytes" in value)


def run_mode(dataset: str, mode: str) -> dict:
    """In this process: read every config's docs as lmms-eval would and keep what it keeps."""
    import datasets

    from benchsmith.exports.lmms_eval_task import BenchsmithTask
    from benchsmith.hf.reader import read_build_info
    from benchsmith.scoring.vlicl_normalise import TEXT_TO_IMAGE_TASKS

    info = read_build_info(Path(dataset))
    # lmms-eval's docs ask for text; the text-to-image configs (CoBSAT, ...) are answered
    # with images and scored by an image judge, and have no lmms-eval docs
    configs = [c for c in info["configs"] if c != "episodes" and c not in TEXT_TO_IMAGE_TASKS]
    before = peak_kib()
    kept, docs, pictures = [], 0, 0
    for config in configs:
        split = (
            "query" if "query" in info["configs"][config] else next(iter(info["configs"][config]))
        )
        shots = (0, 2, 4) if info.get("family") == "vlicl" else ()
        seeds = (0, 1, 2) if shots else ()  # 3 x 3 runs of each VL-ICL query: 1,332 docs
        task = BenchsmithTask(dataset, config, split, shots=shots, seeds=seeds)
        rows = datasets.load_dataset(dataset, config, split=split)
        for doc in task.process_docs(rows):
            visuals = task.doc_to_visual(doc)  # the model's call: decoded, then let go
            docs += 1
            pictures += len(visuals)
            if mode == "no logging":
                continue
            logged = {k: v for k, v in doc.items() if not is_media(v)}
            if mode == "logging, 0.1 layout":  # 0.1: the decoded pictures sat in the parts
                logged["parts"] = [{"text": p["text"], "image": None if p["image"] is None
                                    else visuals[p["image"]]} for p in doc["parts"]]  # fmt: skip
            kept.append(logged)
    return {"docs": docs, "pictures": pictures, "kept_docs": len(kept),
            "peak_mib": round(peak_kib() / 1024, 1),
            "growth_mib": round((peak_kib() - before) / 1024, 1)}  # fmt: skip


class _AnswerA:
    """An OpenAI-compatible chat server on 127.0.0.1 that answers "A" to everything: the
    model of a real lmms-eval run, which costs it nothing."""

    def __enter__(self) -> str:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                   "model": "fake", "choices": [{"index": 0, "finish_reason":
                                   "stop", "message": {"role": "assistant", "content": "A"}}],
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                             "total_tokens": 2}}).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.server.shutdown()


def run_real(dataset: str, logging: bool) -> dict:
    """The real lmms-eval (``python -m lmms_eval eval --model openai``) over the dataset's
    export, as a child of this fresh process: its peak resident memory is the child's."""
    import resource

    with tempfile.TemporaryDirectory(prefix="benchsmith-bench-lmms-") as work:
        tasks, out = Path(work, "tasks"), Path(work, "out")
        family = json.loads(Path(dataset, "build_info.json").read_text())["family"]
        shots = ["--shots", "0", "2", "4", "--seeds", "0", "1", "2"] if family == "vlicl" else []
        subprocess.run([sys.executable, "-m", "benchsmith", "export", "lmms-eval", dataset,
                        "--out", str(tasks), *shots], check=True, capture_output=True)  # fmt: skip
        with _AnswerA() as base_url:
            env = {**os.environ, "OPENAI_API_KEY": "x", "HF_DATASETS_OFFLINE": "1",
                   "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(Path(work, "hf"))}  # fmt: skip
            started = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-m", "lmms_eval", "eval", "--model", "openai", "--model_args",
                 f"model_version=fake,base_url={base_url},num_concurrent=4", "--include_path",
                 str(tasks), "--tasks", f"benchsmith_{family}", "--output_path", str(out),
                 *(["--log_samples"] if logging else [])],
                capture_output=True, text=True, env=env)  # fmt: skip
            seconds = time.perf_counter() - started
        results = sorted(out.rglob("*_results.json"))
        if not results:
            raise SystemExit(f"lmms-eval wrote no results:\n{run.stderr[-2000:]}")
        docs = sum(
            v["effective"] for v in json.loads(results[-1].read_text())["n-samples"].values()
        )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child
    return {"docs": docs, "peak_mib": round(peak / 1024, 1), "seconds": round(seconds, 1)}


def main_real(dataset: str) -> None:
    """``--real``: lmms-eval itself, with and without ``--log_samples``."""
    results = {}
    for logging in (False, True):
        done = subprocess.run([sys.executable, __file__, "--dataset", dataset, "--real-mode",
                               "logging" if logging else "no logging"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        results["logging" if logging else "no logging"] = json.loads(
            done.stdout.strip().splitlines()[-1]
        )
    print_table(["real lmms-eval", "docs", "peak MiB", "seconds"],
                [[m, r["docs"], r["peak_mib"], r["seconds"]] for m, r in results.items()])  # fmt: skip
    path = write_result(NAME + "_real", {"machine": machine_info(), "dataset": dataset,
                                         "results": results})  # fmt: skip
    print(f"-> {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default=str(ROOT / "published" / "vlicl"),
                        help="a published folder (default: the sample VL-ICL)")  # fmt: skip
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one mode, in-process
    parser.add_argument("--real", action="store_true",
                        help="run the real lmms-eval instead (needs the [harness] extra)")  # fmt: skip
    parser.add_argument("--real-mode", choices=("logging", "no logging"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.real_mode:
        print(json.dumps(run_real(args.dataset, args.real_mode == "logging")))
        return
    if args.real:
        main_real(args.dataset)
        return
    if args.mode:
        print(json.dumps(run_mode(args.dataset, args.mode)))
        return
    results = {}
    for mode in MODES:  # each in a fresh process (its own peak) that writes its docs afresh
        with tempfile.TemporaryDirectory(prefix="benchsmith-bench-hf-") as cache:
            env = {**os.environ, "HF_DATASETS_CACHE": cache, "HF_DATASETS_OFFLINE": "1"}
            done = subprocess.run([sys.executable, __file__, "--dataset", args.dataset, "--mode",
                                   mode], capture_output=True, text=True, check=True, env=env)  # fmt: skip
        results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    print_table(["mode", "docs", "pictures", "kept docs", "peak MiB", "growth MiB"],
                [[m, r["docs"], r["pictures"], r["kept_docs"], r["peak_mib"], r["growth_mib"]]
                 for m, r in results.items()])  # fmt: skip
    base = results["no logging"]["growth_mib"] or 1.0
    ratio = {m: round(r["growth_mib"] / base, 2) for m, r in results.items()}
    print(f"growth against no logging: {ratio}")
    path = write_result(NAME, {"machine": machine_info(), "dataset": args.dataset,
                               "results": results, "growth_ratio": ratio})  # fmt: skip
    print(f"-> {path}")


if __name__ == "__main__":
    main()
