"""CoBSAT, ingested from the release: rows checked against their pixels, demonstrations drawn
from the query's scenario only (hashed, and legacy as the original's ``select_demonstration``
draws them), and a predict -> judge -> score loop whose judge checks both answer values."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
from pathlib import Path

import pytest
from chat_server import ChatServer, ImageReply, Reply
from cobsat_release import SCENARIOS, seen, write_cobsat_release
from PIL import Image
from vlicl_fixtures import publish_ingested

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.episodes import build_episodes
from benchsmith.builders.vlicl.ingest import ingest_task
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.hf.reader import read_columns

SHOTS = (0, 1, 2, 4, 8)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_cobsat_release(tmp_path_factory.mktemp("cobsat") / "VL-ICL")


def test_rows_keep_the_release_fields_and_their_images_show_them(release):
    rows = ingest_task(release, "cobsat", ImageHashes())
    assert (len(rows.support), len(rows.query)) == (24, 6)
    for row in rows.support + rows.query:
        extras = row["extras"]
        latent = extras["latent"]
        other = "attribute" if latent == "object" else "object"
        assert (
            extras["answers"] == [extras[latent], extras[other]] == [row["answer"], row["question"]]
        )
        assert extras["scenario_id"] == f"color|{latent}|{extras[latent]}"
        for ref in row["images"]:
            data = (release / ref["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == ref["sha256"]
            assert seen(data) == (extras["object"], extras["attribute"])
    assert all(r["images"] == [] for r in rows.query)  # never shown: named in provenance
    references = [r["sources"] for r in rows.query]
    assert sum(bool(s) for s in references) == 5  # one query names its reference by id only
    for sources in filter(None, references):
        data = (release / sources[0]["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sources[0]["sha256"]
    assert rows.stats.get("support_answer_not_its_fields", 0) == 0


def test_a_broken_row_names_the_file_and_entry(release, tmp_path):
    copy = tmp_path / "VL-ICL"
    write_cobsat_release(copy)
    entries = json.loads((copy / "cobsat" / "query.json").read_text())
    entries[1]["latent"] = "colour"
    (copy / "cobsat" / "query.json").write_text(json.dumps(entries))
    with pytest.raises(SourceError, match=r"query.json\[1\]: latent 'colour'"):
        ingest_task(copy, "cobsat", ImageHashes())
    entries[1]["latent"], entries[1]["answer"] = "object", ["ball"]
    (copy / "cobsat" / "query.json").write_text(json.dumps(entries))
    with pytest.raises(SourceError, match=r"query.json\[1\]: answer \['ball'\]"):
        ingest_task(copy, "cobsat", ImageHashes())


def original_select(support_meta: list[dict], queries: list[dict], seed: int) -> dict:
    """The original's T2I loop for CoBSAT, written from its code (T2I_inference.py,
    utils/ICL_utils.py): seed once, then per shot count, per query in file order, the
    support entries of the same task, latent field and latent value, `random.sample`d."""
    stream = random.Random(seed)
    out = {}
    for n_shot in SHOTS:
        for k, query in enumerate(queries):
            latent_var = query["latent"]
            pool = [x for x in support_meta if x[latent_var] == query[latent_var]
                    and x["latent"] == latent_var and x["task"] == query["task"]]  # fmt: skip
            out[(n_shot, k)] = [support_meta.index(x) for x in stream.sample(pool, n_shot)]
    return out


def test_demonstrations_come_from_the_query_scenario_and_legacy_replays_the_original(release):
    rows = ingest_task(release, "cobsat", ImageHashes())
    episodes, _ = build_episodes("cobsat", rows.support, rows.query, shots=SHOTS,
                                 seeds=(0, 1, 2), samplers=("hashed", "legacy"))  # fmt: skip
    support = {r["id"]: r for r in rows.support}
    queries = {r["id"]: r for r in rows.query}
    for episode in episodes:
        scenario = queries[episode["query_id"]]["extras"]["scenario_id"]
        demos = [support[i] for i in episode["demo_ids"]]
        assert len(demos) == episode["n_shot"] == len(set(episode["demo_ids"]))
        assert {d["extras"]["scenario_id"] for d in demos} <= {scenario}
    support_meta = json.loads((release / "cobsat" / "support.json").read_text())
    query_meta = json.loads((release / "cobsat" / "query.json").read_text())
    for seed in (0, 1, 2):
        expected = original_select(support_meta, query_meta, seed)
        for episode in (e for e in episodes if e["sampler"] == "legacy" and e["seed"] == seed):
            k = int(episode["query_id"].rsplit("/", 1)[1])
            positions = [int(i.rsplit("/", 1)[1]) for i in episode["demo_ids"]]
            assert positions == expected[(episode["n_shot"], k)], episode
    hashed_8 = {e["query_id"]: sorted(e["demo_ids"]) for e in episodes
                if e["sampler"] == "hashed" and e["n_shot"] == 8 and e["seed"] == 0}  # fmt: skip
    assert all(len(ids) == 8 for ids in hashed_8.values())  # the whole scenario at 8 shots


def test_a_rebuild_reads_cobsat_from_the_release_as_ingest_mode_does(release, tmp_path):
    """Beside rebuilt tasks, cobsat's rows and episodes are the ingested ones, byte for byte;
    without a release folder the plan stops naming the key that sets it."""
    plans = {}
    for mode in ("rebuild", "ingest"):
        config = VliclConfig.from_params({"tasks": ["cobsat"], "mode": mode}, "sample")
        plans[mode] = tmp_path / mode
        build_vlicl(config, VliclSources(ingest=release), plans[mode])
    for name in ("tasks/cobsat/support.jsonl", "tasks/cobsat/query.jsonl", "episodes.jsonl"):
        assert (plans["rebuild"] / name).read_bytes() == (plans["ingest"] / name).read_bytes()
    info = json.loads((plans["rebuild"] / "build_info.json").read_text(encoding="utf-8"))
    assert info["mode"] == "rebuild" and info["roots"]["ingest"] == str(release)
    assert any(
        c.startswith("cobsat: read from the official VL-ICL release") for c in info["choices"]
    )
    with pytest.raises(BenchsmithError, match="come from the VL-ICL release only") as error:
        build_vlicl(VliclConfig.from_params({"tasks": ["cobsat"]}, "sample"), VliclSources(),
                    tmp_path / "none")  # fmt: skip
    assert "vlicl.sources.ingest_dir" in str(error.value) and not (tmp_path / "none").exists()


def test_predict_judge_score_checks_latent_and_non_latent(release, tmp_path, monkeypatch, capsys):
    """The generator copies the first demonstration (a grey square at zero shots): right about
    the latent value (the scenario's), wrong about the query's own non-latent value. The judge
    reads each image's pixels. So at every shot count > 0: latent 1.0, non-latent 0.0, total 0;
    at zero shots everything fails."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    published = publish_ingested(release, ["cobsat"], tmp_path)
    grey = io.BytesIO()
    Image.new("RGB", (48, 48), (128, 128, 128)).save(grey, format="PNG")

    def answer(body: dict):
        content = body["messages"][-1]["content"]
        if isinstance(content, str):  # zero-shot: text only
            content = [{"type": "text", "text": content}]
        images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
                  for p in content if p["type"] == "image_url"]  # fmt: skip
        if body["model"] == "painter":
            return ImageReply(images[0] if images else grey.getvalue())
        text = next(p["text"] for p in content if p["type"] == "text")
        shown = seen(images[0]) or ()  # grey shows nothing
        return Reply("yes" if any(f"show {v}?" in text for v in shown) else "no")

    out = tmp_path / "runs" / "painter.jsonl"
    with ChatServer(answer) as server:
        common = ["--base-url", server.base_url, "--llm-cache", tmp_path / "cache"]
        assert main([str(a) for a in ["predict", published, "--config", "cobsat", "--seeds", "0",
                                      "--model", "painter", "--out", out, *common]]) == 0  # fmt: skip
        capsys.readouterr()
        assert main([str(a) for a in ["score", published, "--config", "cobsat", "--predictions",
                                      out, "--judge-model", "judge", "--judge-base-url",
                                      server.base_url, "--llm-cache", tmp_path / "cache"]]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert report["per_shot"]["0"]["latent"] == 0.0
    for n in ("1", "2", "4", "8"):
        block = report["per_shot"][n]
        assert (block["accuracy"], block["latent"], block["non_latent"]) == (0.0, 1.0, 0.0), n
    queries = read_columns(published, "cobsat", "query", ["question", "answers"])
    assert sorted(map(tuple, queries["answers"].to_pylist())) == sorted(
        (value, other) for _, _, value, others in SCENARIOS for other in others[8:]
    )


def test_audit_rederives_cobsat_rows_and_names_a_changed_column(release, tmp_path, monkeypatch,
                                                                capsys):  # fmt: skip
    """The audit ingests the release again and compares every row: a changed scenario field or
    answer value is named with its column (shards renamed to their new hash, as a careful
    forger would)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchsmith.core.hashing import sha256_file

    monkeypatch.chdir(tmp_path)
    published = publish_ingested(release, ["cobsat"], tmp_path)
    assert main(["audit", str(published), "--workers", "1"]) == 0
    info_path = published / "build_info.json"
    info = json.loads(info_path.read_text())
    changes = {"query": ("answers", lambda v: [v[0], v[1] + "~"]),
               "support": ("scenario_id", lambda v: v + "~")}  # fmt: skip
    for split, (column, change) in changes.items():
        shard = published / info["configs"]["cobsat"][split]["files"][0]
        table = pq.read_table(shard)
        rows = table.to_pylist()
        rows[1][column] = change(rows[1][column])
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
        renamed = shard.with_name(
            f"{shard.name.rsplit('-', 1)[0]}-{sha256_file(shard)[:16]}.parquet"
        )
        shard.rename(renamed)
        info["configs"]["cobsat"][split]["files"][0] = renamed.relative_to(published).as_posix()
    info_path.write_text(json.dumps(info))
    capsys.readouterr()
    assert main(["audit", str(published), "--workers", "1"]) == 1
    failures = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    for column in ("[answers]", "[scenario_id]"):
        assert any(column in line and "cobsat" in line for line in failures), failures
