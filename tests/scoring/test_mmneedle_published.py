"""Scoring against a real published build (all 21 configs), including mixed K > slots samples."""

from __future__ import annotations

import json

import polars as pl

from benchsmith.cli import main
from benchsmith.scoring.mmneedle import score_predictions


def _gold(built, config):
    files = sorted((built["published"] / "data" / config).glob("test-*.parquet"))
    return pl.read_parquet(
        files, columns=["sample_id", "gold_answer", "is_positive", "needles"]
    ).to_dicts()


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_gold_answers_score_perfectly_on_every_config(built, tmp_path):
    for config in sorted(
        p.name
        for p in (built["published"] / "data").iterdir()
        if not p.name.startswith("haystacks_")
    ):
        rows = [
            {"sample_id": r["sample_id"], "response": r["gold_answer"]}
            for r in _gold(built, config)
        ]
        result = score_predictions(
            built["published"], config, _write(tmp_path / f"{config}.jsonl", rows)
        )
        assert result["n"] == 10, config
        assert (
            result["existence_accuracy"]
            == result["index_accuracy"]
            == result["exact_accuracy"]
            == 1.0
        ), config


def test_mixed_positive_needs_minus_one_for_the_absent_needle(built, tmp_path):
    gold = [r for r in _gold(built, "m1_n2_k5") if r["is_positive"]]
    assert all("-1" in r["gold_answer"] for r in gold)  # one needle of five is absent
    # claim every needle is present (the absent one replaced by a location): existence wrong
    claimed = [
        {"sample_id": r["sample_id"], "response": r["gold_answer"].replace("-1", "1, 1, 1")}
        for r in gold
    ]
    result = score_predictions(
        built["published"], "m1_n2_k5", _write(tmp_path / "p.jsonl", claimed)
    )
    assert result["positive"]["n"] == 5 and result["positive"]["existence_accuracy"] == 0.0
    assert (
        result["positive"]["exact_accuracy"] == 0.0 and result["missing"] == 5
    )  # negatives absent


def test_cli_counts_missing_and_wrong_answers_in_the_denominator(built, tmp_path, capsys):
    gold = _gold(built, "m10_n2_k1")
    rows = []
    for r in gold:
        if r["sample_id"] == 0:
            continue  # missing
        response = r["gold_answer"]
        if r["sample_id"] == 1:
            n = r["needles"][0]
            response = f"Answer: ({n['image_index']},{n['row']},{n['col'] % 2 + 1})"  # right image, wrong column
        if r["sample_id"] == 9:
            response = "I cannot tell."
        rows.append({"sample_id": r["sample_id"], "response": response})
    preds = _write(tmp_path / "preds.jsonl", rows)
    assert (
        main(
            [
                "score",
                str(built["published"]),
                "--config",
                "m10_n2_k1",
                "--predictions",
                str(preds),
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 10 and result["missing"] == 1 and result["unparsed"] == 1
    assert result["positive"]["existence_accuracy"] == 4 / 5  # sample 0 missing
    assert result["positive"]["index_accuracy"] == 4 / 5
    assert result["positive"]["exact_accuracy"] == 3 / 5  # sample 1 wrong column
    assert result["negative"]["existence_accuracy"] == 4 / 5  # sample 9 unparsed
    assert result["exact_accuracy"] == 7 / 10


def test_paper_subset_scores_only_flagged_samples(built, tmp_path):
    import shutil

    import pyarrow.parquet as pq

    out = tmp_path / "published"
    shutil.copytree(built["published"], out)
    shard = next((out / "data" / "m10_n2_k1").glob("test-*.parquet"))
    table = pq.read_table(shard)
    flags = [sid in (0, 1, 5, 6) for sid in table.column("sample_id").to_pylist()]
    index = table.schema.get_field_index("paper_eval_subset")
    pq.write_table(table.set_column(index, table.schema.field(index), [flags]), shard)
    gold = {r["sample_id"]: r["gold_answer"] for r in _gold(built, "m10_n2_k1")}
    rows = [{"sample_id": sid, "response": gold[sid] if sid != 1 else "-1"} for sid in gold]
    preds = _write(tmp_path / "p.jsonl", rows)
    paper = score_predictions(out, "m10_n2_k1", preds, subset="paper")
    assert paper["subset"] == "paper" and paper["n"] == 4 and paper["unknown_ids"] == 0
    assert paper["positive"]["n"] == 2 and paper["positive"]["existence_accuracy"] == 0.5
    assert score_predictions(out, "m10_n2_k1", preds)["n"] == 10
