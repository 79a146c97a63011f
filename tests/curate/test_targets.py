"""``benchsmith curate --targets`` (the DVC stage) and curation of an MMNeedle build."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml
from curate_fixtures import write_mcq_dataset

from benchsmith.builders.mmneedle.family import MMNEEDLE
from benchsmith.cli import main
from benchsmith.commands._common import dataset_kind
from benchsmith.core.hashing import sha256_bytes
from benchsmith.hf.dataset_view import DatasetView
from benchsmith.hf.layout import splits_written
from benchsmith.hf.roots import resolve_roots
from benchsmith.publish.folder_texts import features_in, folder_texts

MMNEEDLE_CONFIG = "m10_n2_k1"


def write_params(path: Path, curate: dict) -> Path:
    path.write_text(yaml.safe_dump({"curate": curate}, sort_keys=False), encoding="utf-8")
    return path


def decisions(out: Path) -> dict[str, list[dict]]:
    by_sample: dict[str, list[dict]] = {}
    for row in pq.read_table(out / "decisions.parquet").to_pylist():
        by_sample.setdefault(row["sample_id"], []).append(row)
    return by_sample


def drop_of(rows: list[dict]) -> dict | None:
    return next((r for r in rows if r["action"] == "drop"), None)


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mcq")
    return write_mcq_dataset(root / "first", n=12), write_mcq_dataset(root / "second", n=12)


# --- --targets -------------------------------------------------------------------------------


def test_targets_curate_every_entry_with_its_own_settings(two_datasets, tmp_path, capsys):
    first, second = two_datasets
    params = write_params(
        tmp_path / "params.yaml",
        {
            "blind": {"enabled": False},
            "images": {"near_threshold": 4},
            "targets": [
                {"name": "plain", "dataset": str(first), "config": "vqa"},
                {
                    "name": "against_support",
                    "dataset": str(second),
                    "config": "vqa",
                    "split": "test",
                    "settings": {"images": {"against_splits": ["support"]}},
                },
            ],
        },
    )
    root = tmp_path / "curated"
    assert main(["curate", "--targets", "--params", str(params), "--out", str(root)]) == 0
    assert sorted(p.name for p in root.iterdir()) == ["against_support", "plain"]
    plain, against = root / "plain", root / "against_support"
    for out, source in ((plain, first), (against, second)):
        assert (out / "decisions.parquet").is_file() and (out / "README.md").is_file()
        info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
        assert (out / info["roots"]["source"]).resolve() == source.resolve()
        assert not Path(info["roots"]["source"]).is_absolute()  # the same bytes in any clone
        assert info["params"]["images"]["near_threshold"] == 4  # shared settings reach both
        assert info["params"]["blind"]["enabled"] is False
        assert len(decisions(out)) == 12
    plain_info = json.loads((plain / "build_info.json").read_text(encoding="utf-8"))
    against_info = json.loads((against / "build_info.json").read_text(encoding="utf-8"))
    assert plain_info["params"]["images"]["against_splits"] == []
    assert against_info["params"]["images"]["against_splits"] == ["support"]
    assert plain_info["params_hash"] != against_info["params_hash"]
    # q009's picture is also in the support split: only the target checking it drops it
    assert drop_of(decisions(plain)["q009"]) is None
    dropped = drop_of(decisions(against)["q009"])
    assert dropped["reason"] == "DUPLICATE_IMAGE"
    assert json.loads(dropped["evidence"])["findings"][0]["scope"] == "across_splits:support"
    # the within-sample duplicate is found by both
    for out in (plain, against):
        assert drop_of(decisions(out)["q005"])["reason"] == "DUPLICATE_IMAGE"
    summary = capsys.readouterr().out
    assert f"-> {plain}" in summary and f"-> {against}" in summary


def test_curated_datasets_carry_the_project_version(two_datasets, tmp_path):
    """The DVC stage passes no --version: the dataset version comes from params.yaml."""
    first, _ = two_datasets
    params = tmp_path / "params.yaml"
    targets = [{"name": "plain", "dataset": str(first), "config": "vqa"}]
    params.write_text(
        yaml.safe_dump({"version": "2.7.1", "curate": {"targets": targets}}), encoding="utf-8"
    )
    root = tmp_path / "curated"
    assert main(["curate", "--targets", "--params", str(params), "--out", str(root)]) == 0
    info = json.loads((root / "plain" / "build_info.json").read_text(encoding="utf-8"))
    assert info["version"] == "2.7.1"
    assert "version: 2.7.1" in (root / "plain" / "README.md").read_text(encoding="utf-8")
    out = tmp_path / "flag"
    cmd = ["curate", str(first), "--config", "vqa", "--params", str(params), "--out", str(out)]
    assert main([*cmd, "--version", "3.0.0"]) == 0
    assert json.loads((out / "build_info.json").read_text(encoding="utf-8"))["version"] == "3.0.0"


def test_a_target_without_config_fails_before_any_curation(two_datasets, tmp_path, capsys):
    first, _ = two_datasets
    params = write_params(
        tmp_path / "params.yaml",
        {
            "targets": [
                {"name": "good", "dataset": str(first), "config": "vqa"},
                {"name": "broken", "dataset": str(first)},
            ]
        },
    )
    root = tmp_path / "curated"
    assert main(["curate", "--targets", "--params", str(params), "--out", str(root)]) == 2
    err = capsys.readouterr().err
    assert "lacks config" in err and "broken" in err and str(params) in err
    assert not (root / "good").exists()


def test_no_targets_is_a_noted_no_op(tmp_path, capsys):
    params = write_params(tmp_path / "params.yaml", {"seed": 1, "targets": []})
    root = tmp_path / "nested" / "curated"
    assert main(["curate", "--targets", "--params", str(params), "--out", str(root)]) == 0
    assert "nothing to curate" in capsys.readouterr().out
    assert root.is_dir() and not any(root.iterdir())


def test_single_dataset_mode_needs_its_arguments(tmp_path, capsys):
    params = write_params(tmp_path / "params.yaml", {})
    assert main(["curate", "--config", "vqa", "--params", str(params)]) == 2
    assert "DATASET_DIR, --config and --out" in capsys.readouterr().err


# --- an MMNeedle build ---------------------------------------------------------------------------


def write_mmneedle_judges(folder: Path, published: Path) -> list[Path]:
    """Nine judges; sample ``i`` is solved by judges ``0..i-1`` (so n_correct = i, 9 at most)."""
    rows = pq.read_table(
        next((published / "data" / MMNEEDLE_CONFIG).glob("test-*.parquet")),
        columns=["sample_id", "gold_answer"],
    ).to_pylist()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(9):
        path = folder / f"judge-{k}.jsonl"
        lines = [
            json.dumps(
                {
                    "sample_id": str(r["sample_id"]),
                    "model": f"judge-{k}",
                    "response": r["gold_answer"] if k < r["sample_id"] else "-9",
                }
            )
            for r in rows
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def curated_mmneedle(built, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("curated_mmneedle")
    (root / "none.yaml").write_text("{}\n", encoding="utf-8")
    judges = write_mmneedle_judges(root / "judges", built["published"])
    out = root / "out"
    code = main(
        [
            "curate",
            str(built["published"]),
            "--config",
            MMNEEDLE_CONFIG,
            "--out",
            str(out),
            "--judges",
            *map(str, judges),
            "--no-blind",
            "--no-image-check",
            "--params",
            str(root / "none.yaml"),
        ]
    )
    assert code == 0
    return out


def source_rows(published: Path) -> dict[int, dict]:
    path = next((published / "data" / MMNEEDLE_CONFIG).glob("test-*.parquet"))
    return {r["sample_id"]: r for r in pq.read_table(path).to_pylist()}


def test_curated_mmneedle_loads_offline_with_difficulty_and_decisions(curated_mmneedle, built):
    table = datasets.load_dataset(str(curated_mmneedle), MMNEEDLE_CONFIG, split="test")
    # paper bins drop easy (>= 6 of 9 judges): samples 6..9 go, 0..5 stay
    assert sorted(table["sample_id"]) == [0, 1, 2, 3, 4, 5]
    sources = source_rows(built["published"])
    for row in table:
        i = row["sample_id"]
        assert row["n_correct"] == i
        assert row["difficulty"] == ("zero_pass" if i == 0 else "hard" if i < 3 else "middle")
        source = sources[i]
        for column in ("haystack", "needles", "gold_answer", "prompt", "is_positive"):
            assert row[column] == source[column]  # the source row, unchanged
        # provenance: the build's, extended by the curation decisions and the source row
        before, after = source["provenance"], row["provenance"]
        assert after["params_hash"] == before["params_hash"]
        assert after["sources"][:-1] == before["sources"]
        assert after["sources"][-1]["id"] == str(i)
        assert after["sources"][-1]["file"] == f"{MMNEEDLE_CONFIG}/test"
        assert after["decisions"][: len(before["decisions"])] == before["decisions"]
        curated = after["decisions"][len(before["decisions"]) :]
        assert [(d["stage"], d["action"]) for d in curated] == [("curate/difficulty", "keep")]
        assert json.loads(curated[0]["evidence"])  # which judges solved it
    dropped = decisions(curated_mmneedle)
    assert {sid for sid, rows in dropped.items() if drop_of(rows)} == {"6", "7", "8", "9"}
    assert all(drop_of(dropped[s])["reason"] == "EASY" for s in ("6", "7", "8", "9"))


def test_curated_mmneedle_carries_only_the_haystacks_it_needs(curated_mmneedle, built):
    data = sorted(p.name for p in (curated_mmneedle / "data").iterdir())
    assert data == ["haystacks_n2", MMNEEDLE_CONFIG]
    info = json.loads((curated_mmneedle / "build_info.json").read_text(encoding="utf-8"))
    assert info["source"]["joined_configs"] == ["haystacks_n2"]
    for path in (built["published"] / "data" / "haystacks_n2").glob("*.parquet"):
        copied = curated_mmneedle / "data" / "haystacks_n2" / path.name
        assert copied.read_bytes() == path.read_bytes()
    haystacks = datasets.load_dataset(str(curated_mmneedle), "haystacks_n2", split="test")
    assert len(haystacks) == 20
    # the curated folder reads like its source: same columns, images joined from its own copy
    kind, info = dataset_kind(curated_mmneedle)
    assert kind.columns(info) == MMNEEDLE.columns({})  # a curated folder keeps its columns
    view = DatasetView(curated_mmneedle, MMNEEDLE_CONFIG, "test", kind.columns(info))
    source = DatasetView(built["published"], MMNEEDLE_CONFIG, "test", MMNEEDLE.columns({}))
    source_images = {s.sample_id: s.images for s in source.iter_samples()}
    samples = list(view.iter_samples())
    assert [s.sample_id for s in samples] == ["0", "1", "2", "3", "4", "5"]
    for sample in samples:
        assert len(sample.images) == 10
        assert [sha256_bytes(b) for b in sample.images] == [
            sha256_bytes(b) for b in source_images[sample.sample_id]
        ]


def test_audit_prints_the_decisions_of_a_curated_mmneedle_sample(curated_mmneedle, capsys):
    assert main(["audit", str(curated_mmneedle), "--config", MMNEEDLE_CONFIG, "--id", "0"]) == 0
    text = capsys.readouterr().out
    assert "OK" in text and "difficulty: keep" in text
    assert main(["audit", str(curated_mmneedle), "--config", MMNEEDLE_CONFIG, "--id", "7"]) == 0
    text = capsys.readouterr().out
    assert "difficulty: drop EASY" in text


def test_a_kept_row_deleted_with_every_account_fixed_is_named(curated_mmneedle, tmp_path, capsys):
    """The last kept row deleted, its shard renamed to the new hash, build_info.json's counts
    edited and the card, licence and croissant.json rendered again from it: every account
    agrees, only the decision log still knows the row was kept."""
    import hashlib
    import shutil

    folder = Path(shutil.copytree(curated_mmneedle, tmp_path / "curated"))
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    roots = [f"--root={k}={v}" for k, v in resolve_roots(info["roots"], curated_mmneedle).items()]
    written = info["configs"][MMNEEDLE_CONFIG]["test"]
    shard = folder / written["files"][0]
    table = pq.read_table(shard)
    dropped = str(table.column("sample_id")[-1])
    pq.write_table(table.slice(0, table.num_rows - 1), shard)
    renamed = shard.with_name(f"test-00000-{hashlib.sha256(shard.read_bytes()).hexdigest()[:16]}"
                              ".parquet")  # fmt: skip
    shard.rename(renamed)
    new_name = renamed.relative_to(folder).as_posix()
    written.update(files=[new_name], num_examples=written["num_examples"] - 1,
                   num_bytes=renamed.stat().st_size)  # fmt: skip
    info["rows_built_by"][0]["rows"] -= 1
    (folder / "build_info.json").write_text(json.dumps(info), encoding="utf-8")
    # the card, the licence and croissant.json rendered again by benchsmith's own publisher
    # code from the edited build_info.json: every account agrees with the rows left
    kind, _ = dataset_kind(folder)
    recipe = kind.auditor(folder, info, dict(resolve_roots(info["roots"], curated_mmneedle))
                          ).card_recipe()  # fmt: skip
    splits = splits_written(info["configs"])
    for name, text in folder_texts(recipe, info, splits, features_in(folder, splits),
                                   folder).items():  # fmt: skip
        (folder / name).write_text(text, encoding="utf-8")
    assert main(["audit", str(folder), *roots]) == 1
    failures = [line.strip() for line in capsys.readouterr().out.splitlines()
                if line.strip().startswith("FAIL ")]  # fmt: skip
    assert failures == [
        f"FAIL      {MMNEEDLE_CONFIG}/{dropped}: kept sample is missing from the published rows"
    ]


def test_mmneedle_image_stage_hashes_the_joined_haystacks(built, tmp_path):
    (tmp_path / "none.yaml").write_text("{}\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["curate", str(built["published"]), "--config", MMNEEDLE_CONFIG, "--out", str(out)]
    assert main([*args, "--no-blind", "--params", str(tmp_path / "none.yaml")]) == 0
    info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    report = info["reports"]["image_duplicates"]
    assert report["images_hashed"] == 10 * 10  # ten samples, ten stitched images each
    assert report["unreadable"] == 0
    for rows in decisions(out).values():
        for finding in json.loads(rows[-1]["evidence"]).get("findings", []):
            assert finding["scope"] == "within_sample"
            assert 0 <= finding["image"] < finding["other"] < 10
