"""``export lmms-eval``: task folders that load as lmms-eval loads them, send what ``predict``
sends and score as ``benchsmith score`` does.

lmms-eval needs torch, so its own loader is not installed here; :mod:`lmms_eval_yaml` follows
its rules (``!function`` from the YAML's folder, ``include``, local ``data_files``). The
parquet is loaded the way lmms-eval loads ``dataset_path: parquet``, with ``datasets``.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from pathlib import Path

import datasets
import numpy as np
import pytest
import yaml
from lmms_eval_yaml import load_task_yaml
from PIL import Image

from benchsmith.builders import FAMILIES
from benchsmith.cli import main
from benchsmith.family.requests import PredictOptions, RequestSource
from benchsmith.hf.reader import read_build_info
from benchsmith.scoring import SCORERS

CONVENTIONS = {"task", "dataset_path", "dataset_kwargs", "test_split", "output_type",
               "doc_to_visual", "doc_to_text", "doc_to_target", "process_results",
               "lmms_eval_specific_kwargs", "generation_kwargs", "metric_list"}  # fmt: skip


def export(published: Path, out: Path, *extra: str) -> list[Path]:
    assert main(["export", "lmms-eval", str(published), "--out", str(out), *extra]) == 0
    return sorted(out.glob("*/benchsmith_*.yaml"))


def undecoded(feature):
    """``feature`` with every Image left as its bytes (``datasets`` decodes a picture each time
    a row is read)."""
    if isinstance(feature, datasets.Image):
        return datasets.Image(decode=False)
    if isinstance(feature, dict):
        return {name: undecoded(inner) for name, inner in feature.items()}
    if isinstance(feature, datasets.List):
        return datasets.List(undecoded(feature.feature), length=feature.length)
    if isinstance(feature, list):
        return [undecoded(feature[0])]
    return feature


def run_task(config: dict, responders) -> tuple[list[tuple[str, str]], dict[str, dict]]:
    """What lmms-eval does with a generate_until task: load, process_docs, build each request,
    collect process_results per metric, aggregate; once per responder. Returns each doc's
    (benchsmith_key, target) and the aggregated scores per responder.

    Every doc is scored; the requests are built, with their pictures decoded as lmms-eval
    decodes them, for the first doc of every layout of text and image parts (each shot count
    of an in-context task) and every 25th doc: decoding all of VL-ICL's 2,000 sample docs
    (13,000 pictures) would take most of this test, and every layout is seen anyway."""
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   split=config["test_split"])  # fmt: skip
    docs = config["process_docs"](loaded)
    plain = docs.cast(datasets.Features(undecoded(dict(docs.features))))
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    items = {r.__name__: {m["metric"]: [] for m in config["metric_list"]} for r in responders}
    seen, layouts = [], {}
    for index, doc in enumerate(plain):
        target = config["doc_to_target"](doc)
        for respond in responders:
            result = config["process_results"](doc, [respond(doc, target)])
            for metric, value in result.items():
                items[respond.__name__][metric].append(value)
        seen.append((doc["benchsmith_key"], doc["target"]))
        layout = tuple("text" if part["image"] is None else "image" for part in doc["parts"])
        layouts.setdefault(layout, index)
    for index in sorted(set(layouts.values()) | set(range(0, len(plain), 25))):
        doc = docs[index]
        messages = config["doc_to_messages"](doc, kwargs)
        assert messages[-1]["role"] == "user" and all(
            (c["type"] == "text" and isinstance(c["text"], str)) or
            (c["type"] == "image" and isinstance(c["url"], Image.Image))
            for m in messages for c in m["content"])  # fmt: skip
        pictures = [c["url"] for c in messages[-1]["content"] if c["type"] == "image"]
        stored = [plain[index]["images"]["bytes"][part["image"]]
                  for part in plain[index]["parts"] if part["image"] is not None]  # fmt: skip
        assert [p.tobytes() for p in pictures] == [  # the stored pictures, as RGB
            Image.open(io.BytesIO(data)).convert("RGB").tobytes() for data in stored]  # fmt: skip
        visuals = config["doc_to_visual"](doc)
        assert len(visuals) == len(pictures)
        assert isinstance(config["doc_to_text"](doc, kwargs), str)
        assert config["doc_to_target"](doc) == plain[index]["target"]
    scores = {name: {m["metric"]: m["aggregation"](values[m["metric"]])
                     for m in config["metric_list"]} for name, values in items.items()}  # fmt: skip
    return seen, scores


def cli_score(published: Path, config: str, docs: list[tuple[str, str]], respond, tmp_path,
              capsys) -> dict:  # fmt: skip
    path = tmp_path / f"{config}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for key, target in docs:
            response = respond({"benchsmith_key": key}, target)
            row = {**json.loads(key), "response": response}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    capsys.readouterr()
    assert main(["score", str(published), "--config", config, "--predictions", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def gold(doc, target):
    return target


def wrong(doc, target):  # the gold for about half the requests, a wrong reply for the others
    digest = hashlib.sha256(doc["benchsmith_key"].encode()).digest()
    return target if digest[0] % 2 else "zz"


@pytest.mark.parametrize("family", ["mmneedle", "vlicl", "mmiu", "multi"])
def test_tasks_score_as_benchsmith_score(family, sample_project, tmp_path, capsys):
    published = sample_project / "published" / family
    tasks = export(published, tmp_path / "tasks")
    info = read_build_info(published)
    assert tasks and (tmp_path / "tasks" / f"benchsmith_{family}.yaml").is_file()
    group = yaml.safe_load((tmp_path / "tasks" / f"benchsmith_{family}.yaml").read_text())
    assert sorted(group["task"]) == sorted(load_task_yaml(p)["task"] for p in tasks)
    metric = f"{family}_{SCORERS.get(family).headline.replace('.', '_')}"
    # the group's line: lmms-eval's unweighted mean of the tasks' headlines (api/group.py)
    assert group["aggregate_metric_list"] == [{"metric": metric, "aggregation": "mean",
                                               "weight_by_size": False}]  # fmt: skip
    for path in tasks:
        config = load_task_yaml(path)
        assert set(config) >= CONVENTIONS and config["output_type"] == "generate_until"
        assert config["metadata"]["version"] == info["version"]
        name = config["metadata"]["config"]
        headline: dict[str, float] = {}
        docs, by_responder = run_task(config, (gold, wrong))
        for respond in (gold, wrong):
            scores = by_responder[respond.__name__]
            report = cli_score(published, name, docs, respond, tmp_path, capsys)
            assert report.get("missing", 0) == 0, (path, report)
            [(metric, value)] = scores.items()
            scorer = SCORERS.get(family)
            assert metric == f"{family}_{scorer.headline.replace('.', '_')}"
            assert value == pytest.approx(scorer.headline_value(report)), (path, report)
            headline[respond.__name__] = value
        assert headline["wrong"] < headline["gold"], path


def test_docs_are_the_requests_predict_sends(sample_project, tmp_path):
    published = sample_project / "published" / "vlicl"
    tasks = export(published, tmp_path / "tasks", "--shots", "0", "2", "--seeds", "0",
                   "--config", "clevr")  # fmt: skip
    [path] = tasks
    config = load_task_yaml(path)
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   split=config["test_split"])  # fmt: skip
    docs = config["process_docs"](loaded)
    info = read_build_info(published)
    options = PredictOptions(shots=(0, 2), seeds=(0,))
    requests = list(FAMILIES.get("vlicl").prediction_requests(
        RequestSource(published, info, "clevr", "query", options)))  # fmt: skip
    assert [json.loads(d["benchsmith_key"]) for d in docs] == [r.key for r in requests]
    assert {json.loads(d["benchsmith_key"])["n_shot"] for d in docs} == {0, 2}
    for doc, request in zip(docs, requests, strict=True):
        content = config["doc_to_messages"](doc, {"pre_prompt": "", "post_prompt": ""})[-1]
        sent = [p if isinstance(p, str) else Image.open(io.BytesIO(p)).convert("RGB").tobytes()
                for p in request.parts]  # fmt: skip
        got = [c["text"] if c["type"] == "text" else c["url"].tobytes()
               for c in content["content"]]  # fmt: skip
        assert got == sent
    two_shot = next(d for d in docs if json.loads(d["benchsmith_key"])["n_shot"] == 2)
    text = config["doc_to_text"](two_shot)
    assert text.count("<image>") == 3 and text.index("<image>") < text.index("Question:")


def test_system_prompt_and_prompt_kwargs(sample_project, tmp_path):
    published = sample_project / "published" / "multi"
    [path] = export(published, tmp_path / "tasks", "--config", "questions")
    config = load_task_yaml(path)
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   split=config["test_split"])  # fmt: skip
    doc = next(iter(config["process_docs"](loaded)))
    kwargs = {"pre_prompt": "PRE ", "post_prompt": " POST"}
    messages = config["doc_to_messages"](doc, kwargs)
    assert messages[0]["role"] == "system" and "考试答题助手" in messages[0]["content"][0]["text"]
    texts = [c["text"] for c in messages[1]["content"] if c["type"] == "text"]
    assert texts[0].startswith("PRE ") and texts[-1].endswith(" POST")
    assert config["doc_to_text"](doc, kwargs).startswith(doc["system"])


def test_bad_input(sample_project, tmp_path, capsys):
    published = sample_project / "published"
    assert main(["export", "lmms-eval", str(published / "mmiu"), "--shots", "2",
                 "--out", str(tmp_path / "t")]) == 2  # fmt: skip
    assert "--shots applies to VL-ICL" in capsys.readouterr().err
    assert main(["export", "lmms-eval", str(published / "mmiu"), "--out",
                 str(tmp_path / "x.tsv")]) == 2  # fmt: skip
    assert "a folder of task folders" in capsys.readouterr().err
    assert main(["export", "lmms-eval", str(published / "vlicl"), "--config", "episodes",
                 "--out", str(tmp_path / "t")]) == 2  # fmt: skip
    assert "episodes" in capsys.readouterr().err and not (tmp_path / "t").exists()
    # MMIU's ScanNet tasks keep their images as references: refused by name, left out otherwise
    assert main(["export", "lmms-eval", str(published / "mmiu"), "--config", "3d_pose_estimation",
                 "--out", str(tmp_path / "t")]) == 2  # fmt: skip
    assert "benchsmith build mmiu rehydrate" in capsys.readouterr().err
    tasks = export(published / "mmiu", tmp_path / "t")
    assert "left out 5 config(s)" in capsys.readouterr().err
    assert [p.parent.name for p in tasks] == ["image_spatial_transformation_estimation",
                                              "jigsaw_puzzle_solving"]  # fmt: skip


@pytest.mark.parametrize("target", ["mmiu_jigsaw", "mmneedle_m1_n2_k1", "multi_questions",
                                    "vlicl_clevr_query"])  # fmt: skip
def test_a_curated_folders_tasks_send_its_familys_requests_and_score_as_benchsmith_score(
    target, sample_project, tmp_path, capsys
):
    """A curated target exports as tasks of its own name whose docs are the source family's
    requests for the kept rows (what `predict` sends for the curated folder), scored by the
    family's scorer as `benchsmith score` scores the curated folder."""
    from benchsmith.curate.evaluate import curated_requests

    published = sample_project / "published" / "curated" / target
    info = read_build_info(published)
    family = FAMILIES.get(info["source"]["family"])
    extra = ("--shots", "0", "2", "--seeds", "0") if family.name == "vlicl" else ()
    [path] = export(published, tmp_path / "tasks", *extra)
    assert (tmp_path / "tasks" / f"benchsmith_curated_{target}.yaml").is_file()
    config = load_task_yaml(path)
    assert config["task"] == f"benchsmith_curated_{target}_{info['source']['config']}"
    docs, by_responder = run_task(config, (gold, wrong))
    options = (
        PredictOptions(shots=(0, 2), seeds=(0,)) if family.name == "vlicl" else PredictOptions()
    )
    sent = curated_requests(published, info, info["source"]["config"], info["source"]["split"],
                            family, options)  # fmt: skip
    assert [json.loads(key) for key, _ in docs] == [r.key for r in sent]
    for respond in (gold, wrong):
        report = cli_score(published, info["source"]["config"], docs, respond, tmp_path, capsys)
        assert report.get("missing", 0) == 0, report
        [(metric, value)] = by_responder[respond.__name__].items()
        scorer = SCORERS.get(family.name)
        assert value == pytest.approx(scorer.headline_value(report)), report


def test_mmiu_scannet_tasks_render_references_from_the_copy_the_export_names(
    sample_project, tmp_path
):
    """An lmms-eval task exported with --scannet renders each referenced image when lmms-eval
    loads its docs: the docs equal those of the rehydrated folder's task, image for image."""
    published = sample_project / "published" / "mmiu"
    scannet = sample_project / "data" / "sources" / "scannet" / "ScanNet"
    config = "3d_depth_estimation"
    [path] = export(published, tmp_path / "tasks", "--config", config, "--scannet", str(scannet))
    assert repr(str(scannet.resolve())) in (path.parent / "utils.py").read_text(encoding="utf-8")
    rehydrated = tmp_path / "mmiu_full"
    assert main(["build", "mmiu", "rehydrate", str(published), "--scannet", str(scannet),
                 "--out", str(rehydrated)]) == 0  # fmt: skip
    [full] = export(rehydrated, tmp_path / "full", "--config", config)

    def docs(task_path):
        config_ = load_task_yaml(task_path)
        loaded = datasets.load_dataset(config_["dataset_path"], **config_["dataset_kwargs"],
                                       split=config_["test_split"])  # fmt: skip
        made = config_["process_docs"](loaded)
        return list(made.cast(datasets.Features(undecoded(dict(made.features)))))

    mine, theirs = docs(path), docs(full)
    assert mine and mine == theirs
    assert all(any(p["image"] is not None for p in d["parts"]) for d in mine)


def test_generation_stops_where_predict_stops(sample_project, tmp_path):
    """No stop string (predict sends none): lmms-eval adds its few-shot delimiter "\\n\\n" to a
    task whose generation_kwargs lack ``until``, which would cut MULTI's multi-paragraph
    answers; greedy, as predict's temperature 0."""
    [path] = export(sample_project / "published" / "multi", tmp_path / "tasks", "--config",
                    "questions")  # fmt: skip
    generation = load_task_yaml(path)["generation_kwargs"]
    assert generation["until"] == [] and generation["temperature"] == 0
    assert generation["do_sample"] is False and generation["max_new_tokens"] >= 1024


def _lmms_eval_media(value) -> bool:
    """lmms-eval's ``is_multimodal_content`` (``lmms_eval/utils.py``, read at 75571cfe; its
    torch.Tensor case aside): the values ``--log_samples`` leaves out of a doc it logs."""
    if isinstance(value, bytes | bytearray | np.ndarray | Image.Image):
        return True
    return isinstance(value, dict) and ("array" in value or "bytes" in value)


def _holds_a_picture(value) -> bool:
    if isinstance(value, bytes | bytearray | np.ndarray | Image.Image):
        return True
    if isinstance(value, dict):
        return any(_holds_a_picture(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_a_picture(v) for v in value)
    return False


@pytest.mark.parametrize("family", ["mmneedle", "vlicl"])
def test_a_logged_doc_keeps_no_picture(family, sample_project, tmp_path):
    """With ``--log_samples`` lmms-eval keeps every doc it logs for the whole run, less its
    media values: the docs' pictures must sit where that rule drops them, or memory grows with
    the number of docs (8 GB for MMNeedle when decoded pictures sat inside ``parts``)."""
    tasks = export(sample_project / "published" / family, tmp_path / "tasks")
    pictured = 0  # docs with pictures (a VL-ICL text variant's have none)
    for path in tasks[:3]:
        config = load_task_yaml(path)
        loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                       split=config["test_split"])  # fmt: skip
        docs = config["process_docs"](loaded)
        assert len(docs) > 0
        for doc in docs:
            logged = {k: v for k, v in doc.items() if not _lmms_eval_media(v)}
            assert set(logged) == {"benchsmith_key", "system", "parts", "target"}, path
            assert not _holds_a_picture(logged), path
            json.dumps(logged)  # written to the samples log as it is
            placed = [p["image"] for p in doc["parts"] if p["image"] is not None]
            assert placed == list(range(len(doc["images"]["bytes"]))), path
            pictured += bool(placed)
        visuals = config["doc_to_visual"](docs[0])
        assert [v.mode for v in visuals] == ["RGB"] * len(docs[0]["images"]["bytes"])
    assert pictured > 0


def test_a_limited_run_says_what_its_number_means(sample_project, tmp_path, caplog):
    """lmms-eval's ``--limit N`` runs the first N docs: the number is the config's score with
    the docs not run counted wrong, and a warning (and the report) says so, with the counts."""
    [path] = export(sample_project / "published" / "mmneedle", tmp_path / "tasks", "--config",
                    "m1_n2_k1")  # fmt: skip
    config = load_task_yaml(path)
    loaded = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"],
                                   split=config["test_split"])  # fmt: skip
    docs = config["process_docs"](loaded)
    [metric] = config["metric_list"]
    items = [config["process_results"](doc, [doc["target"]])[metric["metric"]] for doc in docs]
    # lmms-eval loads utils.py once per `!function`: the aggregation's task is another object
    task = metric["aggregation"].__self__
    assert task is not config["process_docs"].__self__
    assert len(docs) > 3
    with caplog.at_level(logging.WARNING, logger="benchsmith.lmms_eval"):
        assert metric["aggregation"](items) == 1.0
        assert not caplog.records and "docs_run" not in task.last_report
        assert metric["aggregation"](items[:3]) == pytest.approx(3 / len(docs))
    [warning] = caplog.records
    assert f"ran 3 of the task's {len(docs)} docs" in warning.getMessage()
    assert "not run count as wrong" in warning.getMessage()
    assert (task.last_report["docs_run"], task.last_report["docs_total"]) == (3, len(docs))
    assert task.last_report["missing"] == len(docs) - 3
