"""The ``benchsmith`` entry point: help, user errors without tracebacks, exit codes."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchsmith.cli import main
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME, read_captions


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in ("source", "build", "publish", "audit", "score", "curate", "predict"):
        assert command in out


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "usage" in capsys.readouterr().err


def test_plan_with_missing_captions_reports_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no params.yaml here: defaults apply
    out = tmp_path / "plan"
    code = main(["build", "mmneedle", "plan", "--captions", "missing.json", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert "missing.json" in captured.err
    assert "error" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""
    assert not out.exists()


def test_missing_params_file_reports_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "absent_params.yaml"
    code = main(
        ["build", "mmneedle", "plan", "--captions", "x.json", "--params", str(params), "--out", "o"]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert str(params) in captured.err
    assert "Traceback" not in captured.err


def test_a_setting_a_step_refuses_names_the_params_file_the_command_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two words cannot name five classes: the plan refuses it, deep inside the family, where
    only the values are known; the message names the file given with --params, not a default
    params.yaml (which here holds nothing wrong)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("seed: 0\n", encoding="utf-8")
    mine = tmp_path / "elsewhere" / "mine.yaml"
    mine.parent.mkdir()
    mine.write_text("vlicl:\n  words: [dax, blicket]\n", encoding="utf-8")
    out = tmp_path / "plan"
    assert main(["build", "vlicl", "plan", "--params", str(mine), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "2 nonsense words cannot name 5 classes" in err
    assert f"file: {mine}" in err and "file: params.yaml" not in err
    assert not out.exists()


def test_coco_sample_writes_the_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "coco"
    assert main(["source", "sample", "coco", "--out", str(out), "--n-images", "30"]) == 0
    assert capsys.readouterr().out == ""  # status goes to stderr, stdout stays clean
    source = read_captions(out / CAPTIONS_RELPATH)
    assert len(source.images_with_captions) == 30
    jpgs = {p.name for p in (out / IMAGES_DIRNAME).glob("*.jpg")}
    assert jpgs == {image.file_name for image in source.images}


def test_coco_sample_out_of_range_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["source", "sample", "coco", "--out", str(tmp_path / "coco"), "--n-images", "0"])
    captured = capsys.readouterr()
    assert code == 2
    assert "n_images" in captured.err
    assert "Traceback" not in captured.err


def test_python_m_version(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchsmith", "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"benchsmith {importlib.metadata.version('benchsmith')}"


def run_with_reader_gone(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run the CLI with its stdout reader already gone, like ``benchsmith ... | head -0``."""
    code = "import sys; from benchsmith.cli import main; sys.exit(main(sys.argv[1:]))"
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write fails with EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            timeout=300,
        )
    finally:
        os.close(write_end)


def test_a_closed_stdout_is_no_error_and_keeps_the_real_exit_status(built, tmp_path):
    published = built["published"]
    audit = ["audit", str(published), "--config", "m1_n2_k1", "--id", "0"]
    result = run_with_reader_gone(audit, tmp_path)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.returncode == 0, result.stderr
    # a failing command still fails: the exit status is the command's, not the pipe's
    result = run_with_reader_gone([*audit[:-1], "no-such-id"], tmp_path)
    assert "Traceback" not in result.stderr and result.returncode == 2
