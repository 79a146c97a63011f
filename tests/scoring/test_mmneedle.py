"""MMNeedle scoring against a tiny dataset in the published parquet layout."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.mmneedle import score_predictions

NEEDLE = pl.Struct(
    {
        "caption": pl.String,
        "caption_id": pl.Int64,
        "coco_image_id": pl.Int64,
        "image_index": pl.Int8,
        "row": pl.Int8,
        "col": pl.Int8,
    }
)
SCHEMA = {
    "sample_id": pl.Int64,
    "num_images": pl.Int8,
    "grid": pl.Int8,
    "num_needles": pl.Int8,
    "is_positive": pl.Boolean,
    "needles": pl.List(NEEDLE),
    "gold_answer": pl.String,
    "prompt": pl.String,
}


def _row(sid: int, m: int, n: int, locations: list[tuple[int, int, int] | None]) -> dict:
    needles = [
        {
            "caption": f"caption {sid}-{j}",
            "caption_id": 1000 * sid + j,
            "coco_image_id": 50_000 + 10 * sid + j,
            "image_index": None if loc is None else loc[0],
            "row": None if loc is None else loc[1],
            "col": None if loc is None else loc[2],
        }
        for j, loc in enumerate(locations)
    ]
    gold = "; ".join("-1" if loc is None else ", ".join(map(str, loc)) for loc in locations)
    return {
        "sample_id": sid,
        "num_images": m,
        "grid": n,
        "num_needles": len(locations),
        "is_positive": locations[0] is not None,
        "needles": needles,
        "gold_answer": gold,
        "prompt": "unused",
    }


def _write_config(root: Path, config: str, shards: list[list[dict]]) -> None:
    folder = root / "data" / config
    folder.mkdir(parents=True)
    (root / "build_info.json").write_text('{"family": "mmneedle"}')
    for i, rows in enumerate(shards):
        path = folder / f"test-{i:05d}-of-{len(shards):05d}.parquet"
        pl.DataFrame(rows, schema=SCHEMA).write_parquet(path)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "published"
    _write_config(
        root,
        "m10_n2_k1",
        [
            [_row(0, 10, 2, [(3, 1, 2)]), _row(5000, 10, 2, [None])],
            [_row(1, 10, 2, [(7, 2, 2)]), _row(5001, 10, 2, [None])],
        ],
    )
    _write_config(
        root,
        "m1_n2_k2",
        [
            [
                _row(0, 1, 2, [(1, 1, 2), (1, 2, 1)]),
                _row(1, 1, 2, [(1, 2, 2), (1, 1, 1)]),
                _row(5000, 1, 2, [None, None]),
            ]
        ],
    )
    return root


def _predictions(tmp_path: Path, rows: list[dict], name: str = "preds.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _preds(tmp_path: Path, responses: dict[int, str | None]) -> Path:
    return _predictions(tmp_path, [{"sample_id": k, "response": v} for k, v in responses.items()])


def test_k1_metrics_by_hand(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "3, 1, 2", 1: "7, 1, 1", 5000: "-1", 5001: "2, 2, 2"})
    report = score_predictions(dataset, "m10_n2_k1", preds)
    assert report["n"] == 4
    assert report["existence_accuracy"] == 0.75
    assert report["index_accuracy"] == 0.75
    assert report["exact_accuracy"] == 0.5
    assert report["exact_accuracy_se"] == pytest.approx(math.sqrt(0.25 / 4))
    positive = report["positive"]
    assert positive["n"] == 2
    assert positive["existence_accuracy"] == positive["index_accuracy"] == 1.0
    assert positive["exact_accuracy"] == 0.5
    assert positive["exact_accuracy_se"] == pytest.approx(math.sqrt(0.25 / 2))
    assert positive["existence_accuracy_se"] == 0.0
    negative = report["negative"]
    assert negative["n"] == 2
    assert negative["existence_accuracy"] == negative["exact_accuracy"] == 0.5
    assert negative["index_accuracy"] == 0.5
    assert (report["unparsed"], report["missing"], report["unknown_ids"]) == (0, 0, 0)
    assert report["strict"] is False
    json.dumps(report)  # serialisable


def test_top_level_keys(dataset: Path, tmp_path: Path) -> None:
    report = score_predictions(dataset, "m10_n2_k1", _preds(tmp_path, {0: "-1"}))
    assert set(report) == {
        "config",
        "n",
        "existence_accuracy",
        "index_accuracy",
        "exact_accuracy",
        "positive",
        "negative",
        "unparsed",
        "missing",
        "unknown_ids",
        "strict",
        "subset",
        "existence_accuracy_se",
        "index_accuracy_se",
        "exact_accuracy_se",
        "per_position",
    }


def test_per_position_buckets_are_independent(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "3, 1, 2", 1: "7, 1, 1", 5000: "-1", 5001: "-1"})
    per = score_predictions(dataset, "m10_n2_k1", preds)["per_position"]
    assert per["by_image_index"] == {
        "3": {"n": 1, "index_accuracy": 1.0, "exact_accuracy": 1.0},
        "7": {"n": 1, "index_accuracy": 1.0, "exact_accuracy": 0.0},
    }
    assert per["by_cell"]["1,2"]["exact_accuracy"] == 1.0
    assert per["by_cell"]["2,2"]["exact_accuracy"] == 0.0


def test_missing_rows_and_null_responses_stay_in_denominator(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "3, 1, 2", 5000: "-1", 5001: None})  # no row for sample 1
    report = score_predictions(dataset, "m10_n2_k1", preds)
    assert report["n"] == 4
    assert report["missing"] == 2
    assert report["existence_accuracy"] == 0.5
    assert report["positive"]["exact_accuracy"] == 0.5
    assert report["per_position"]["by_image_index"]["7"]["exact_accuracy"] == 0.0


def test_unparsed_counted_and_wrong(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "the third image", 1: "7, 2", 5000: "no needle", 5001: "-1"})
    report = score_predictions(dataset, "m10_n2_k1", preds)
    assert report["unparsed"] == 3
    assert report["existence_accuracy"] == 0.25
    assert report["positive"]["existence_accuracy"] == 0.0


def test_strict_differs_from_lenient(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "3,1,2", 1: "Answer: 7, 2, 2", 5000: "-1.", 5001: None})
    lenient = score_predictions(dataset, "m10_n2_k1", preds)
    strict = score_predictions(dataset, "m10_n2_k1", preds, strict=True)
    assert lenient["positive"]["exact_accuracy"] == 1.0
    assert strict["positive"]["exact_accuracy"] == 0.0
    assert strict["positive"]["index_accuracy"] == 0.0  # "3,1,2".split(", ")[0] != "3"
    assert strict["positive"]["existence_accuracy"] == 1.0  # anything but -1 "exists"
    assert strict["negative"] == {  # None leaves the denominator, as in the original
        "n": 1,
        "existence_accuracy": 1.0,
        "index_accuracy": 0.0,  # a correct "-1" is compared with the gold index "0"
        "exact_accuracy": 1.0,
    }
    assert strict["excluded"] == {"null_responses": 1, "absent_rows": 0}
    assert strict["strict"] is True
    assert "exact_accuracy" not in strict  # the original never pools positives and negatives


def test_k2_lenient_and_strict(dataset: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, {0: "1, 1, 2; 1, 2, 1", 1: "1, 2, 2; -1", 5000: "-1"})
    report = score_predictions(dataset, "m1_n2_k2", preds)
    assert report["n"] == 3
    assert report["positive"]["existence_accuracy"] == 0.5
    assert report["positive"]["exact_accuracy"] == 0.5
    assert report["negative"]["existence_accuracy"] == 1.0
    assert report["exact_accuracy"] == pytest.approx(2 / 3)
    per = report["per_position"]
    assert per["by_image_index"]["1"] == {"n": 4, "index_accuracy": 0.75, "exact_accuracy": 0.75}
    assert per["by_cell"]["1,1"]["exact_accuracy"] == 0.0
    assert per["by_cell"]["2,2"]["exact_accuracy"] == 1.0

    strict = score_predictions(dataset, "m1_n2_k2", preds, strict=True)
    assert strict["positive"]["existence_accuracy"] == 1.0  # "...; -1" is not an absent form
    assert strict["positive"]["exact_accuracy"] == 0.5
    assert strict["positive"]["all_exact_accuracy"] == 0.75  # 3 of 4 needles, pooled
    assert strict["negative"]["existence_accuracy"] == 1.0
    assert strict["negative"]["exact_accuracy"] == 1.0  # "-1" is the whole K=2 ground truth


def test_strict_k2_short_prediction_pools_only_the_needles_given(
    dataset: Path, tmp_path: Path
) -> None:
    preds = _preds(tmp_path, {0: "1, 1, 2", 1: "1, 2, 2;1, 1, 1", 5000: "-1, -1"})
    strict = score_predictions(dataset, "m1_n2_k2", preds, strict=True)
    positive = strict["positive"]
    assert positive["exact_accuracy"] == 0.0  # ";" without space stays one part
    assert positive["index_accuracy"] == 0.0  # ["1"] != ["1", "1"]: lengths differ
    assert positive["first_exact_accuracy"] == 0.5  # sample 0's first needle is right
    assert positive["all_exact_accuracy"] == 0.5  # one needle compared per sample
    assert strict["negative"]["existence_accuracy"] == 1.0
    assert strict["negative"]["exact_accuracy"] == 0.0  # only "-1" equals the ground truth


def test_numeric_string_ids_and_unknown_ids(dataset: Path, tmp_path: Path) -> None:
    rows = [
        {"sample_id": "0", "response": "3, 1, 2", "model": "x"},
        {"sample_id": 42, "response": "-1"},
    ]
    report = score_predictions(dataset, "m10_n2_k1", _predictions(tmp_path, rows))
    assert report["unknown_ids"] == 1
    assert report["positive"]["exact_accuracy"] == 0.5
    assert report["missing"] == 3


def test_malformed_line_names_file_and_line(dataset: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"sample_id": 0, "response": "-1"}\n{"sample_id": 1, \n', encoding="utf-8")
    with pytest.raises(BenchsmithError, match="line 2") as info:
        score_predictions(dataset, "m10_n2_k1", path)
    assert "bad.jsonl" in str(info.value)


def test_duplicate_sample_id_is_an_error(dataset: Path, tmp_path: Path) -> None:
    rows = [{"sample_id": 1, "response": "-1"}, {"sample_id": "1", "response": "-1"}]
    with pytest.raises(
        BenchsmithError, match="line 2: second row for sample_id 1; the first is line 1"
    ):
        score_predictions(dataset, "m10_n2_k1", _predictions(tmp_path, rows))


def test_missing_config_lists_available(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(BenchsmithError, match="m10_n2_k1") as info:
        score_predictions(dataset, "m10_n8_k5", _preds(tmp_path, {}))
    assert "m1_n2_k2" in str(info.value)


def test_inconsistent_gold_is_an_error(tmp_path: Path) -> None:
    row = _row(0, 10, 2, [(3, 1, 2)])
    row["gold_answer"] = "3, 2, 1"
    _write_config(tmp_path / "pub", "m10_n2_k1", [[row]])
    with pytest.raises(BenchsmithError, match="gold_answer"):
        score_predictions(tmp_path / "pub", "m10_n2_k1", _preds(tmp_path, {}))


def _cli(argv: list[str]) -> int:
    return main(argv)


def test_cli_prints_json(dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    preds = _preds(tmp_path, {0: "3,1,2", 1: "7, 2, 2", 5000: "-1", 5001: "-1"})
    argv = ["score", str(dataset), "--config", "m10_n2_k1"]
    assert _cli([*argv, "--predictions", str(preds)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["exact_accuracy"] == 1.0
    assert _cli([*argv, "--predictions", str(preds), "--legacy"]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert strict["strict"] is True
    assert strict["positive"]["exact_accuracy"] == 0.5
    assert strict["negative"]["exact_accuracy"] == 1.0
    # the name before 0.2 still works, with a warning naming the new one
    assert _cli([*argv, "--predictions", str(preds), "--strict"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == strict
    assert "--strict is deprecated; use --legacy" in captured.err


def test_strict_per_cell_and_aliased_depths(dataset: Path, tmp_path: Path) -> None:
    """evaluate.py's per-cell map (0 for an empty cell) and its [[]]*10 depth lists."""
    preds = _preds(tmp_path, {0: "3, 1, 2", 1: "7, 1, 1", 5000: "0, 0, 0", 5001: "-1"})
    strict = score_predictions(dataset, "m10_n2_k1", preds, strict=True)
    cells = strict["positive"]["per_position"]["by_cell"]
    assert cells == {
        "1,1": {"n": 0, "exact_accuracy": 0.0},
        "1,2": {"n": 1, "exact_accuracy": 1.0},
        "2,1": {"n": 0, "exact_accuracy": 0.0},
        "2,2": {"n": 1, "exact_accuracy": 0.0},
    }
    depths = strict["positive"]["per_position"]["by_image_index"]
    assert set(depths) == {str(d) for d in range(1, 11)}
    assert all(d == {"index_accuracy": 1.0, "exact_accuracy": 0.5} for d in depths.values())
    negative = strict["negative"]
    assert negative["index_accuracy"] == 0.5  # "0, 0, 0" matches the gold index "0"
    assert negative["existence_accuracy"] == 0.5  # ... but says a needle exists
    assert strict["printed_by_original"]["negative"] == ["existence_accuracy"]


def test_cli_help_documents_metrics(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        _cli(["score", "--help"])
    out = capsys.readouterr().out
    for word in ("existence", "index", "exact", "--strict", "Answer:", "unparsed"):
        assert word in out
