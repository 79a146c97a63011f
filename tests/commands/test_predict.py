"""``benchsmith predict`` against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chat_server import ChatServer, Reply, Status
from PIL import Image

from benchsmith.cli import build_parser
from benchsmith.core.errors import BenchsmithError

QUESTIONS = {
    "s0": ("What colour is the square? (q-s0)", "red", ["red", "green", "blue"]),
    "s1": ("How many squares? (q-s1)", "1", None),
    "s2": ("Which shape? (q-s2)", "B", ["circle", "square"]),
    "s3": ("Is it bright? (q-s3)", "yes", None),
    "s4": ("Name the colour. (q-s4)", "green", None),
    "s5": ("Which side? (q-s5)", "A", ["left", "right"]),
}


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def png(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (10, 8), (40 * seed % 256, 90, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def dataset(tmp_path) -> Path:
    """A small published dataset: data/<config>/<split>-00000-<hex>.parquet with HF Image."""
    root = tmp_path / "published"
    folder = root / "data" / "vqa"
    folder.mkdir(parents=True)
    ids = list(QUESTIONS)
    table = pa.table(
        {
            "sample_id": ids,
            "question": [QUESTIONS[i][0] for i in ids],
            "answer": [QUESTIONS[i][1] for i in ids],
            "choices": pa.array([QUESTIONS[i][2] for i in ids], type=pa.list_(pa.string())),
            "image": pa.array(
                [{"bytes": png(k), "path": f"{i}.png"} for k, i in enumerate(ids)],
                type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
            ),
        }
    )
    pq.write_table(table, folder / "test-00000-3f9a1c2b.parquet")
    return root


def run(dataset: Path, server: ChatServer, out: Path, *extra: str) -> int:
    """The real `benchsmith predict` parser and handler; errors propagate as exceptions."""
    argv = [
        "predict",
        str(dataset),
        "--config",
        "vqa",
        "--split",
        "test",
        "--model",
        "tiny-vlm",
        "--base-url",
        server.base_url,
        "--llm-cache",
        str(out.parent / "cache"),
        "--out",
        str(out),
        *extra,
    ]
    args = build_parser(argv).parse_args(argv)
    return args.handler(args)


def sample_of(body: dict) -> str:
    from chat_server import message_text

    return re.search(r"\(q-(s\d)\)", message_text(body)).group(1)


def answer(body: dict) -> Reply:
    return Reply(f"answer {sample_of(body)}")


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def answered_samples(server: ChatServer) -> list[str]:
    return [sample_of(r.body) for r in server.requests if isinstance(r.action, Reply)]


def test_predict_writes_rows_with_images_and_the_shared_prompt(dataset, tmp_path):
    out = tmp_path / "preds" / "tiny.jsonl"
    with ChatServer(reply=answer) as server:
        assert run(dataset, server, out, "--detail", "low", "--max-tokens", "16") == 0
    rows = read_rows(out)
    assert [r["sample_id"] for r in rows] == list(QUESTIONS)
    assert all(r["model"] == "tiny-vlm" for r in rows)
    assert [r["response"] for r in rows] == [f"answer {i}" for i in QUESTIONS]
    by_sample = {sample_of(r.body): r for r in server.requests}
    mcq = by_sample["s0"]
    assert mcq.body["model"] == "tiny-vlm" and mcq.body["max_tokens"] == 16
    assert "A. red\nB. green\nC. blue\nAnswer with the option's letter" in mcq.text
    assert "single word or phrase" in by_sample["s1"].text
    assert mcq.image_urls[0].startswith("data:image/png;base64,")
    assert mcq.body["messages"][0]["content"][0]["image_url"]["detail"] == "low"


def test_a_server_echoing_the_api_key_gets_it_written_nowhere(dataset, tmp_path, monkeypatch):
    secret = "sk-echo-me-4be1d0"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    out = tmp_path / "preds.jsonl"
    with ChatServer(reply=lambda body: Reply(f"{sample_of(body)} with key {secret}")) as server:
        assert run(dataset, server, out) == 0
        assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert [r["response"] for r in read_rows(out)] == [f"{i} with key ***" for i in QUESTIONS]
    written = [out, *(p for p in (tmp_path / "cache").rglob("*") if p.is_file())]
    assert not any(secret.encode() in p.read_bytes() for p in written)


def test_text_only_sends_no_image(dataset, tmp_path):
    out = tmp_path / "text.jsonl"
    with ChatServer(reply=answer) as server:
        assert run(dataset, server, out, "--text-only") == 0
    assert len(server.requests) == len(QUESTIONS)
    assert not any(r.has_image for r in server.requests)
    assert len(read_rows(out)) == len(QUESTIONS)


def test_failed_requests_are_retried_by_a_rerun_and_nothing_repeats(dataset, tmp_path, capsys):
    out = tmp_path / "preds.jsonl"

    def flaky(body):
        return Status(500) if sample_of(body) in ("s2", "s4") else answer(body)

    with ChatServer(reply=flaky) as broken:
        assert run(dataset, broken, out, "--max-retries", "0") == 1
    assert sorted(r["sample_id"] for r in read_rows(out)) == ["s0", "s1", "s3", "s5"]
    assert "2 failed" in capsys.readouterr().err

    with ChatServer(reply=answer) as healthy:
        assert run(dataset, healthy, out) == 0
    assert sorted(answered_samples(healthy)) == ["s2", "s4"]
    rows = read_rows(out)
    assert Counter(r["sample_id"] for r in rows) == Counter(list(QUESTIONS))
    answered = answered_samples(broken) + answered_samples(healthy)
    assert sorted(answered) == sorted(QUESTIONS)  # every sample answered exactly once

    with ChatServer(reply=answer) as idle:
        assert run(dataset, idle, out) == 0
    assert idle.requests == []


def test_truncated_last_line_is_dropped_and_answered_from_the_cache(dataset, tmp_path, capsys):
    out = tmp_path / "preds.jsonl"
    with ChatServer(reply=answer) as server:
        run(dataset, server, out)
    full = out.read_bytes()
    out.write_bytes(full[:-12])  # killed in the middle of writing the last row
    with ChatServer(reply=answer) as again:
        assert run(dataset, again, out) == 0
    assert again.requests == []  # the cut row's answer comes from the cache
    assert "1 truncated last line dropped" in capsys.readouterr().err
    rows = read_rows(out)
    assert Counter(r["sample_id"] for r in rows) == Counter(list(QUESTIONS))
    assert rows[-1] == json.loads(full.splitlines()[-1])


def test_limit_and_resume_extend_the_same_prefix(dataset, tmp_path):
    out = tmp_path / "preds.jsonl"
    with ChatServer(reply=answer) as server:
        run(dataset, server, out, "--limit", "2")
        assert [r["sample_id"] for r in read_rows(out)] == ["s0", "s1"]
        run(dataset, server, out, "--limit", "4")
    assert [r["sample_id"] for r in read_rows(out)] == ["s0", "s1", "s2", "s3"]
    assert sorted(answered_samples(server)) == ["s0", "s1", "s2", "s3"]


def test_server_down_is_a_clear_error(dataset, tmp_path):
    with ChatServer() as gone:
        pass
    with pytest.raises(BenchsmithError, match="connection error") as error:
        run(dataset, gone, tmp_path / "out" / "preds.jsonl", "--max-retries", "0")
    assert "fix:" in str(error.value)
    assert not (tmp_path / "out" / "preds.jsonl").exists()  # no empty file left behind


def test_a_config_without_samples_is_named_not_a_column(sample_project, tmp_path, capsys):
    """MMNeedle's haystacks configs hold stitched images: the error says so, and does not
    blame an --id-column the user never passed."""
    from benchsmith.cli import main

    out = tmp_path / "preds.jsonl"
    argv = ["predict", str(sample_project / "published" / "mmneedle"), "--split", "test",
            "--model", "m", "--out", str(out), "--base-url", "http://127.0.0.1:9/v1"]  # fmt: skip
    assert main([*argv, "--config", "haystacks_n2"]) == 2
    err = capsys.readouterr().err
    assert "'haystacks_n2' holds no samples" in err and "m1_n2_k1" in err
    assert "--id-column" not in err and not out.exists()
    assert main([*argv, "--config", "m9_n2_k1"]) == 2
    assert "has no config 'm9_n2_k1'; configs with samples:" in capsys.readouterr().err


def test_other_model_or_broken_middle_line_is_refused(dataset, tmp_path):
    out = tmp_path / "preds.jsonl"
    out.write_text(json.dumps({"sample_id": "s0", "model": "other", "response": "A"}) + "\n")
    with ChatServer(reply=answer) as server:
        with pytest.raises(BenchsmithError, match="'other'"):
            run(dataset, server, out)
        out.write_text('{"sample_id": "s0", "mod\n' + json.dumps({"sample_id": "s1"}) + "\n")
        with pytest.raises(BenchsmithError, match="line 1"):
            run(dataset, server, out)
    assert server.requests == []


def test_two_runs_into_one_file_never_both_append(dataset, tmp_path):
    """A second predict into the file a first one is writing refuses at once (a lock next to
    the file); the first finishes with every sample exactly once."""
    out = tmp_path / "preds.jsonl"
    slow = lambda body: Reply(f"answer {sample_of(body)}", delay_s=1.0)  # noqa: E731
    with ChatServer(reply=slow) as server:
        first = threading.Thread(target=run, args=(dataset, server, out))
        first.start()
        # the first run holds the lock once it asks the server (the lock file alone appears a
        # moment before the lock is taken: waiting for it let the second run win the race)
        while not server.requests:
            time.sleep(0.01)
        assert (tmp_path / ".preds.jsonl.lock").exists()
        with pytest.raises(BenchsmithError, match="another benchsmith run is writing"):
            run(dataset, server, out)
        first.join()
    rows = read_rows(out)
    assert Counter(r["sample_id"] for r in rows) == Counter(list(QUESTIONS))


def test_a_file_predict_did_not_write_is_never_cut_and_out_inside_the_input_is_refused(
    dataset, tmp_path
):
    notes = tmp_path / "notes.txt"
    notes.write_text("first line\nmy last line, no newline")  # not a row cut mid-write
    with ChatServer(reply=answer) as server:
        with pytest.raises(BenchsmithError, match="line 1 is not valid JSON"):
            run(dataset, server, notes)
        assert notes.read_text() == "first line\nmy last line, no newline"
        single = tmp_path / "single.txt"
        single.write_text("just words")
        with pytest.raises(BenchsmithError, match="line 1 is not valid JSON"):
            run(dataset, server, single)
        assert single.read_text() == "just words"
        with pytest.raises(BenchsmithError, match="inside this command's input"):
            run(dataset, server, dataset / "preds.jsonl")
    assert server.requests == [] and not (dataset / "preds.jsonl").exists()
