"""Change any column of any row and the audit fails naming it: every family, config, column;
and what each family writes beside its rows (card, Croissant, decision log, counts) too.

A copy of each published folder of the sample project (MMNeedle, VL-ICL, MMIU, MULTI, the curated targets)
gets one value changed per column of every config, in different rows where the config has
enough of them. The tampered shards are renamed to their new content hash and
``build_info.json`` is updated to list them, as a careful forger would, so only the
re-derivation of the rows can catch the changes. One whole-dataset audit must then exit 1 and
name, for every (config, column), the row that was changed, and nothing else: every line it
fails is a changed row or a consequence of one (the split's byte count, the shard's Croissant
entry, the card's count table), so an audit that failed untouched data fails here too.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith.cli import main
from benchsmith.commands._common import dataset_kind
from benchsmith.core.hashing import sha256_file
from benchsmith.hf.roots import resolve_roots

DATASETS = (
    "mmneedle",
    "vlicl",
    "mmiu",
    "multi",
    "curated/mmneedle_m1_n2_k1",
    "curated/vlicl_clevr_query",
    "curated/mmiu_jigsaw",
)


def default_for(dtype: pa.DataType) -> Any:
    """A non-null value of ``dtype`` (to replace a null)."""
    if pa.types.is_struct(dtype):
        return {f.name: default_for(f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [default_for(dtype.value_type)]
    if pa.types.is_boolean(dtype):
        return True
    if pa.types.is_integer(dtype):
        return 7
    if pa.types.is_floating(dtype):
        return 0.5
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return b"forged"
    return "forged"


def mutate(value: Any, dtype: pa.DataType) -> Any:
    """``value`` with one leaf changed (the first one, depth first)."""
    if value is None:
        return default_for(dtype)
    if pa.types.is_struct(dtype):
        first = dtype[0]
        return {**value, first.name: mutate(value[first.name], first.type)}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        if not value:
            return [default_for(dtype.value_type)]
        return [mutate(value[0], dtype.value_type), *value[1:]]
    if pa.types.is_boolean(dtype):
        return not value
    if pa.types.is_integer(dtype):
        return value + 1000
    if pa.types.is_floating(dtype):
        return value + 1.5
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return value + b"\0"
    return value + "~"


def tamper(folder: Path) -> list[tuple[str, str, str]]:
    """Change one value per (config, column) of the first shard of every split; rename each
    shard to its new hash and list it in build_info.json. Returns (config, row id, column)."""
    info_path = folder / "build_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    changed = []
    for config, splits in info["configs"].items():
        for split, written in splits.items():
            shard = folder / written["files"][0]
            table = pq.read_table(shard)
            rows = table.to_pylist()
            if not rows:
                continue
            for k, field in enumerate(table.schema):
                index = k % len(rows)
                rows[index][field.name] = mutate(rows[index][field.name], field.type)
                changed.append((config, split, index, field.name))
            pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
            digest = sha256_file(shard)[:16]
            renamed = shard.with_name(f"{shard.name.rsplit('-', 1)[0]}-{digest}.parquet")
            shard.rename(renamed)
            written["files"][0] = renamed.relative_to(folder).as_posix()
    info_path.write_text(json.dumps(info), encoding="utf-8")
    return changed


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _card_sentence(folder: Path) -> str:
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    card.write_text(text + "Every answer was checked by hand.\n", encoding="utf-8")
    return f"README.md: line {text.count(chr(10)) + 1}"


def _croissant_description(folder: Path) -> str:
    _edit_json(folder / "croissant.json", lambda d: d.update(description="A better dataset."))
    return "croissant.json: description"


def _removed_log(folder: Path) -> str:
    """A removed question's decision rewritten (MULTI's decision log)."""
    path = folder / "removed.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    first = json.loads(lines[0])
    first["decisions"][0]["reason"] = "TOO_EASY"
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines), encoding="utf-8")
    return "removed.jsonl: line 1"


def _count_of_first_task(*keys: str):
    """A count in build_info.json's ``counts`` (of the first task) raised by one."""

    def tamper(folder: Path) -> str:
        info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
        path = (sorted(info["counts"])[0], *keys)
        holder = info["counts"]
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] += 1
        (folder / "build_info.json").write_text(json.dumps(info), encoding="utf-8")
        return "build_info.json: counts." + ".".join(path)

    return tamper


# what each family writes beside its rows, one change each: the audit must name them all too
FOLDER_TAMPERS = {
    "mmneedle": (_card_sentence, _croissant_description),
    "vlicl": (_card_sentence, _count_of_first_task("query", "removed")),
    "mmiu": (_croissant_description, _count_of_first_task()),
    "multi": (_card_sentence, _removed_log),
    "curated/mmneedle_m1_n2_k1": (_card_sentence,),
    "curated/vlicl_clevr_query": (_croissant_description,),
    "curated/mmiu_jigsaw": (_card_sentence,),
}


def _roots_of(source: Path) -> list[str]:
    """``--root`` flags pointing a copy of ``source`` at the original's source folders."""
    info = json.loads((source / "build_info.json").read_text(encoding="utf-8"))
    kind, _ = dataset_kind(source)
    resolved = resolve_roots(info["roots"], source)
    return [f"--root={k}={v}" for k, v in resolved.items() if k in kind.root_names]


@pytest.mark.parametrize("name", DATASETS)
def test_audit_names_every_changed_column(sample_project, tmp_path, monkeypatch, capsys, name):
    source = sample_project / "published" / name
    folder = tmp_path / name.replace("/", "_")
    shutil.copytree(source, folder)
    monkeypatch.chdir(tmp_path)  # any working directory
    argv = ["audit", str(folder), "--workers", "1", *_roots_of(source)]
    changed = tamper(folder)
    assert len(changed) >= 10
    beside = [change(folder) for change in FOLDER_TAMPERS[name]]
    assert main(argv) == 1
    failures = [line for line in capsys.readouterr().out.splitlines()
                if line.lstrip().startswith("FAIL")]  # fmt: skip
    unnamed = [where for where in beside if not any(where in line for line in failures)]
    assert not unnamed, (unnamed, failures[-12:])
    missed = [
        (config, split, index, column)
        for config, split, index, column in changed
        if not any(f"[{column}]" in line and config in line for line in failures)
    ]
    assert not missed, (
        missed,
        "\n".join(f for f in failures if any(m[0] in f for m in missed))[:3000],
    )
    # ... and nothing untouched: one line per changed value, the others its consequences
    rows = [line for line in failures if re.search(r" \[[^\]]+\]: ", line)]
    assert len(rows) == len(changed), "\n".join(rows)[:3000]
    unexplained = [line for line in failures
                   if line not in rows and not _explained(line, changed, beside)]  # fmt: skip
    assert not unexplained, "\n".join(unexplained)[:3000]


def _explained(line: str, changed: list[tuple[str, str, int, str]], beside: list[str]) -> bool:
    """A failure that is not a changed row: a change made beside the rows, or what a changed
    shard or count implies elsewhere in the folder (a re-rendered card line among them)."""
    tampered = {(config, split) for config, split, _, _ in changed}
    return (
        any(where in line for where in beside)
        or any(f"configs.{config}.{split}.num_bytes" in line for config, split in tampered)
        or any(
            f"croissant.json: distribution.data/{config}/{split}-" in line
            for config, split in tampered
        )  # fmt: skip
        or any(f"{config}: copied image config differs" in line for config, _ in tampered)
        or (
            "README.md: line" in line
            and any(w.startswith("build_info.json: counts.") for w in beside)
        )  # fmt: skip
    )


def test_a_changed_shard_keeping_its_name_and_a_broken_shard_are_named(
    sample_project, tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "mmneedle"
    shutil.copytree(sample_project / "published" / "mmneedle", folder)
    roots = _roots_of(sample_project / "published" / "mmneedle")
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    sample_shard = folder / info["configs"]["m10_n2_k1"]["test"]["files"][0]
    table = pq.read_table(sample_shard)
    pq.write_table(table, sample_shard, compression="gzip")  # same rows, other bytes
    image_shard = folder / info["configs"]["haystacks_n2"]["test"]["files"][0]
    data = bytearray(image_shard.read_bytes())
    data[-72:-8] = b"\xff" * 64  # inside the footer's metadata: the shard cannot be read
    image_shard.write_bytes(bytes(data))
    assert main(["audit", str(folder), "--workers", "1", *roots]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert (
        f"does not match the hash in its name (sha256 {sha256_file(sample_shard)[:16]})" in out.out
    )
    assert str(sample_shard) in out.out and str(image_shard) in out.out
    assert any(
        "does not parse" in line and str(image_shard) in line for line in out.out.splitlines()
    )


@pytest.mark.parametrize("name", DATASETS)
def test_every_loadable_config_audits_by_id(sample_project, tmp_path, monkeypatch, capsys, name):
    """Each config a dataset loads (curated copies of MMNeedle's haystacks and VL-ICL's
    episodes included) can be audited by id; an unknown id's error shows what ids look like;
    changed rows picked by their ids fail naming every changed column."""
    source = sample_project / "published" / name
    folder = tmp_path / name.replace("/", "_")
    shutil.copytree(source, folder)
    monkeypatch.chdir(tmp_path)
    roots = _roots_of(source)
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    kind, _ = dataset_kind(folder)
    auditor = kind.auditor(folder, info, dict(resolve_roots(info["roots"], source)))
    id_columns = {config: auditor.id_column(config) for config in info["configs"]}
    assert all(id_columns.values()), id_columns  # every config has ids to audit by

    def row_id(config: str, split: str, index: int) -> str:
        shard = next((folder / "data" / config).glob(f"{split}-*.parquet"))
        return str(pq.read_table(shard, columns=[id_columns[config]])[0][index])

    first = {config: row_id(config, next(iter(s)), 0) for config, s in info["configs"].items()}
    assert main(["audit", str(folder), "--id", *sorted(set(first.values())), *roots]) == 0
    out = capsys.readouterr().out
    assert "OK" in out
    # an unknown id is refused before anything is re-derived (a rebuild, at full scale)
    derived: list[str] = []
    original_check = type(auditor).check_dataset
    monkeypatch.setattr(type(auditor), "check_dataset",
                        lambda self, report: derived.append("check") or original_check(self, report))  # fmt: skip
    for config in sorted(info["configs"])[:: max(1, len(info["configs"]) - 1)]:
        argv = ["audit", str(folder), "--config", config, "--id", "no-such-id", *roots]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{config} ids are its `{id_columns[config]}` column, e.g. {first[config]!r}" in err
    assert derived == []
    monkeypatch.setattr(type(auditor), "check_dataset", original_check)

    changed = [
        (config, column, row_id(config, split, index))
        for config, split, index, column in tamper(folder)
        if column != id_columns[config]  # a forged id names no row: the whole audit finds it
    ]
    ids = sorted({rid for _, _, rid in changed})
    assert main(["audit", str(folder), "--id", *ids, *roots]) == 1
    failures = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    missed = [
        (config, column, rid)
        for config, column, rid in changed
        if not any(f"[{column}]" in line and config in line for line in failures)
    ]
    assert not missed, (missed, "\n".join(failures)[:3000])
    assert {config for config, _, _ in changed} == set(info["configs"])
