"""A whole-dataset audit checks the folder's own accounts, not only its rows: counts in
``build_info.json``, the card's metadata and ``croissant.json`` against the shards and each
other, and each row's place against its re-derivation. Each tamper below keeps every row intact (so only these checks can catch it) and the
audit must fail naming the file and the field; an untouched copy passes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith.cli import main
from benchsmith.commands._common import dataset_kind
from benchsmith.core.hashing import sha256_file
from benchsmith.publish.roots import resolve_roots


def _copy(built: dict[str, Path], tmp_path: Path) -> tuple[Path, list[str]]:
    source = built["published"]
    folder = Path(shutil.copytree(source, tmp_path / "mmneedle"))
    info = json.loads((source / "build_info.json").read_text(encoding="utf-8"))
    kind, _ = dataset_kind(source)
    roots = [f"--root={k}={v}" for k, v in resolve_roots(info["roots"], source).items()
             if k in kind.root_names]  # fmt: skip
    return folder, roots


def _edit_json(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _first(info: dict) -> tuple[str, str]:
    config = sorted(info["configs"])[0]
    return config, next(iter(info["configs"][config]))


def _count_in_build_info(folder: Path) -> str:
    info = json.loads((folder / "build_info.json").read_text())
    config, split = _first(info)
    _edit_json(folder / "build_info.json",
               lambda d: d["configs"][config][split].update(num_examples=999))  # fmt: skip
    return f"build_info.json: configs.{config}.{split}.num_examples"


def _card_version(folder: Path) -> str:
    card = folder / "README.md"
    info = json.loads((folder / "build_info.json").read_text())
    text = card.read_text(encoding="utf-8")
    old = f"version: {info['version']}\n"
    assert old in text
    card.write_text(text.replace(old, "version: 9.9.9\n", 1), encoding="utf-8")
    return "README.md: version"


def _card_count(folder: Path) -> str:
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    head, front, body = text.split("---", 2)
    import yaml

    meta = yaml.safe_load(front)
    entry = meta["dataset_info"][0]
    entry["splits"][0]["num_examples"] += 5
    new_front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    card.write_text(f"{head}---\n{new_front}---{body}", encoding="utf-8")
    split = entry["splits"][0]["name"]
    return f"README.md: dataset_info.{entry['config_name']}.{split}.num_examples"


def _croissant_checksum(folder: Path) -> str:
    zeroed: list[str] = []

    def zero(doc: dict) -> None:
        first = next(d for d in doc["distribution"] if d["@type"] == "cr:FileObject")
        first["sha256"] = "0" * 64
        zeroed.append(first["@id"])

    _edit_json(folder / "croissant.json", zero)
    return f"croissant.json: distribution.{zeroed[0]}.sha256"


def _config_deleted_whole(folder: Path) -> str:
    """Its shards and its build_info entry gone, as a careful forger would."""
    info = json.loads((folder / "build_info.json").read_text())
    config = sorted(info["configs"])[-1]
    shutil.rmtree(folder / "data" / config)
    _edit_json(folder / "build_info.json", lambda d: d["configs"].pop(config))
    return "README.md: configs"


def _rows_reordered(folder: Path) -> str:
    """Two rows of a sample config swapped, the shard renamed to its new hash and listed in
    build_info.json: every row is still equal to its re-derivation, only its place is not."""
    info_path = folder / "build_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    config = next(c for c in sorted(info["configs"]) if not c.startswith("haystacks"))
    split, written = next(iter(info["configs"][config].items()))
    shard = folder / written["files"][0]
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0], rows[1] = rows[1], rows[0]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    renamed = shard.with_name(f"{shard.name.rsplit('-', 1)[0]}-{sha256_file(shard)[:16]}.parquet")
    shard.rename(renamed)
    written["files"][0] = renamed.relative_to(folder).as_posix()
    info_path.write_text(json.dumps(info), encoding="utf-8")
    return f"{config}: row order differs from the re-derivation: row 0 of split {split!r}"


TAMPERS = {
    "count in build_info": _count_in_build_info,
    "card version": _card_version,
    "card split count": _card_count,
    "croissant checksum": _croissant_checksum,
    "config deleted whole": _config_deleted_whole,
    "rows reordered": _rows_reordered,
}


def test_an_untouched_copy_passes(built, tmp_path, capsys):
    folder, roots = _copy(built, tmp_path)
    assert main(["audit", str(folder), *roots]) == 0, capsys.readouterr().out
    assert "card metadata agrees with build_info.json" in capsys.readouterr().out


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_changed_account_is_named_by_file_and_field(built, tmp_path, capsys, tamper):
    folder, roots = _copy(built, tmp_path)
    where = TAMPERS[tamper](folder)
    assert main(["audit", str(folder), *roots]) == 1
    failures = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    assert any(where in line for line in failures), (where, failures)
