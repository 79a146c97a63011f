"""``score --from-vlmevalkit``: a VLMEvalKit run's prediction files (its rows of our exported TSVs
less ``image``, plus ``prediction``; ``.xlsx``, ``.tsv`` or ``.json``) scored by the family's
scorer, equal to ``score --predictions`` on the same answers."""

from __future__ import annotations

import csv
import hashlib
import json
import sys

import openpyxl
import pytest

from benchsmith.cli import main
from benchsmith.scoring import SCORERS

FORMS = ("{}.tsv", "{}_text.tsv", "{}_text_open.tsv")


def read_tsv(path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def answer(row: dict) -> str:
    """The gold for about half the samples, a wrong reply for the others."""
    return row["answer"] if hashlib.sha256(row["id"].encode()).digest()[0] % 2 else "zz"


def write_predictions(rows: list[dict], path, fmt: str):
    """A VLMEvalKit prediction file as its inference writes one (``image`` dropped,
    ``prediction`` added), in PRED_FORMAT ``fmt``."""
    rows = [{**{k: v for k, v in r.items() if k != "image"}, "prediction": answer(r)} for r in rows]
    header = list(rows[0])
    if fmt == "tsv":
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, header, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "json":
        path.write_text(json.dumps(rows, ensure_ascii=False, indent=4), encoding="utf-8")
    else:
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.append(header)
        for row in rows:  # pandas writes an integer column as numbers
            sheet.append([int(v) if k == "index" else v for k, v in row.items()])
        book.save(path)
    return path


def vlmevalkit_run(export_dir, name: str, fmt: str) -> tuple[list, list[dict]]:
    """Every exported file's prediction file, and all their rows."""
    files, rows = [], []
    for pattern in FORMS:
        tsv = export_dir / pattern.format(name)
        if tsv.exists():
            these = read_tsv(tsv)
            rows += these
            files.append(write_predictions(these, tsv.with_name(f"model_{tsv.stem}.{fmt}"), fmt))
    return files, rows


def score(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(["score", *map(str, args)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("family", "config", "fmt"), [
    ("mmneedle", "m10_n2_k2", "xlsx"), ("vlicl", "clevr", "tsv"),
    ("mmiu", "jigsaw_puzzle_solving", "json"), ("multi", "questions", "xlsx")])  # fmt: skip
def test_a_vlmevalkit_run_scores_as_the_same_answers_do(family, config, fmt, sample_project,
                                                         tmp_path, capsys):  # fmt: skip
    published = sample_project / "published" / family
    out = tmp_path / f"{family}.tsv"
    assert main(["export", "vlmevalkit", str(published), "--out", str(out)]) == 0  # every config
    files, rows = vlmevalkit_run(tmp_path, family, fmt)
    mine = [r for r in rows if r["config"] == config]
    assert mine and len(mine) < len(rows) or family == "multi"
    # the same answers as a predictions file, keyed as the scorer keys its rows
    by_id = {r["id"]: answer(r) for r in mine}
    keys = SCORERS.get(family).reference_predictions(published, config)
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(
        json.dumps({**k, "response": by_id[str(next(iter(k.values())))]}, ensure_ascii=False)
        + "\n" for k in keys if str(next(iter(k.values()))) in by_id), encoding="utf-8")  # fmt: skip
    expected = score(capsys, published, "--config", config, "--predictions", plain)
    got = score(capsys, published, "--config", config, "--from-vlmevalkit", *files)
    assert got == expected
    assert got.get("missing", 0) == len(keys) - len(mine)
    headline = SCORERS.get(family).headline_value(got)
    assert 0 < headline < 1  # about half right: the answers really were read and judged


def test_missing_answers_other_configs_and_bad_files(sample_project, tmp_path, capsys):
    published = sample_project / "published" / "mmneedle"
    out = tmp_path / "needle.tsv"
    assert main(["export", "vlmevalkit", str(published), "--out", str(out)]) == 0
    rows = read_tsv(out)
    config = "m10_n2_k1"
    mine = [r for r in rows if r["config"] == config]
    kept = [r for r in rows if r["config"] != config or r is not mine[0]]  # one answer lost
    path = write_predictions(kept, tmp_path / "model_needle.tsv", "tsv")
    report = score(capsys, published, "--config", config, "--from-vlmevalkit", path)
    assert report["missing"] == 1 and report["n"] == len(mine)
    capsys.readouterr()
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"{len(kept) - len(mine) + 1} of other configs skipped" in err
    # an id that is not a sample of the config: ignored and counted, or (--strict-ids) an error
    stray = write_predictions([mine[1], {**mine[1], "id": "999999"}], tmp_path / "stray.tsv",
                              "tsv")  # fmt: skip
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit",
                 str(stray)]) == 0  # fmt: skip
    assert "1 whose id is not a sample of it ignored" in capsys.readouterr().err
    assert main(["score", str(published), "--config", config, "--strict-ids",
                 "--from-vlmevalkit", str(stray)]) == 2  # fmt: skip
    assert "not samples of config" in capsys.readouterr().err
    # an answer given twice, a file of another kind, a file without predictions: named errors
    twice = write_predictions(mine + mine[:1], tmp_path / "twice.tsv", "tsv")
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit",
                 str(twice)]) == 2  # fmt: skip
    assert "answered twice" in capsys.readouterr().err
    (tmp_path / "model.csv").write_text("id,prediction\n0,1\n")
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit",
                 str(tmp_path / "model.csv")]) == 2  # fmt: skip
    assert "not a VLMEvalKit prediction file" in capsys.readouterr().err
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit",
                 str(out)]) == 2  # the export itself: no prediction column  # fmt: skip
    err = capsys.readouterr().err
    assert "no prediction column" in err and str(out) in err
    broken = tmp_path / "model_needle.xlsx"
    broken.write_bytes(b"PK\x03\x04 not a workbook")
    assert main(["score", str(published), "--config", config, "--from-vlmevalkit",
                 str(broken)]) == 2  # fmt: skip
    assert "cannot read this VLMEvalKit prediction file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # one or the other
        main(["score", str(published), "--config", config, "--predictions", str(path),
              "--from-vlmevalkit", str(path)])  # fmt: skip
    assert usage.value.code == 2 and "not allowed with" in capsys.readouterr().err
