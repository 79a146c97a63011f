"""A whole-dataset audit checks the folder, not only its rows: ``build_info.json``'s counts
against the shards and its plan counts against their re-derivation, the card, the licence and
``croissant.json`` against their re-rendering, each row's place against its re-derivation and
each row's build facts against the builds ``build_info.json`` records. Each tamper keeps every
row equal to its re-derivation (so only these checks can catch it) and the audit must fail
naming the file and the field; an untouched copy passes."""

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
from benchsmith.hf.roots import resolve_roots


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


def _configs(folder: Path) -> list[str]:
    return sorted(json.loads((folder / "build_info.json").read_text())["configs"])


def _split_of(folder: Path, config: str) -> str:
    return next(iter(json.loads((folder / "build_info.json").read_text())["configs"][config]))


# -- accounts: each tamper edits one field of one file, each in another config or file, so all
# of them are applied to one copy and each must be named --------------------------------------


def _count_in_build_info(folder: Path) -> str:
    config = _configs(folder)[0]
    split = _split_of(folder, config)
    _edit_json(folder / "build_info.json",
               lambda d: d["configs"][config][split].update(num_examples=999))  # fmt: skip
    return f"build_info.json: configs.{config}.{split}.num_examples"


def _stats_in_build_info(folder: Path) -> str:
    """A count the plan made (shown nowhere else): only its re-derivation can catch it."""
    _edit_json(folder / "build_info.json", lambda d: d["skipped"].update(forged=3))
    return "build_info.json: skipped.forged"


def _code_revision_in_build_info(folder: Path) -> str:
    """A recorded fact, not derivable: the texts rendered from it no longer agree."""
    _edit_json(folder / "build_info.json", lambda d: d.update(code_revision="benchsmith==9+x"))
    return "croissant.json: prov:wasGeneratedBy.description"


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
    entry = meta["dataset_info"][-1]
    entry["splits"][0]["num_examples"] += 5
    new_front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    card.write_text(f"{head}---\n{new_front}---{body}", encoding="utf-8")
    split = entry["splits"][0]["name"]
    return f"README.md: dataset_info.{entry['config_name']}.splits.{split}.num_examples"


def _card_prose(folder: Path) -> str:
    """A number in the card's body (the reference table), nowhere in its metadata."""
    card = folder / "README.md"
    lines = card.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith("| `m"))
    lines[number] = lines[number].replace(" | ", " | 7", 1)
    card.write_text("\n".join(lines), encoding="utf-8")
    return f"README.md: line {number + 1}"


def _licence_claim(folder: Path) -> str:
    path = folder / "LICENSE.md"
    lines = path.read_text(encoding="utf-8").count("\n")
    path.write_text(path.read_text(encoding="utf-8") + "Also free for any commercial use.\n")
    return f"LICENSE.md: line {lines + 1}"


def _croissant_checksum(folder: Path) -> str:
    zeroed: list[str] = []

    def zero(doc: dict) -> None:
        first = next(d for d in doc["distribution"] if d["@type"] == "cr:FileObject")
        first["sha256"] = "0" * 64
        zeroed.append(first["@id"])

    _edit_json(folder / "croissant.json", zero)
    return f"croissant.json: distribution.{zeroed[0]}.sha256"


def _croissant_statement(folder: Path) -> str:
    _edit_json(folder / "croissant.json", lambda d: d.update({"rai:dataBiases": "None known."}))
    return "croissant.json: rai:dataBiases"


ACCOUNTS = {
    "count in build_info": _count_in_build_info,
    "stats in build_info": _stats_in_build_info,
    "code revision in build_info": _code_revision_in_build_info,
    "card version": _card_version,
    "card split count": _card_count,
    "card prose": _card_prose,
    "licence claim": _licence_claim,
    "croissant checksum": _croissant_checksum,
    "croissant statement": _croissant_statement,
}


# -- structure: what a careful forger changes everywhere to keep the accounts agreeing ---------


def _config_deleted_whole(folder: Path) -> str:
    """Its shards and its build_info entry gone, as a careful forger would."""
    config = _configs(folder)[-1]
    shutil.rmtree(folder / "data" / config)
    _edit_json(folder / "build_info.json", lambda d: d["configs"].pop(config))
    return f"README.md: configs.{config}"


def _rewrite_shard(folder: Path, config: str, change: Callable[[list[dict]], None]) -> str:
    """Rows of a config's first shard changed, the shard renamed to its new hash and listed
    in build_info.json (so the shard checks hold); returns the split."""
    info_path = folder / "build_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    split, written = next(iter(info["configs"][config].items()))
    shard = folder / written["files"][0]
    table = pq.read_table(shard)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    renamed = shard.with_name(f"{shard.name.rsplit('-', 1)[0]}-{sha256_file(shard)[:16]}.parquet")
    shard.rename(renamed)
    written["files"][0] = renamed.relative_to(folder).as_posix()
    info_path.write_text(json.dumps(info), encoding="utf-8")
    return split


def _rows_reordered(folder: Path) -> str:
    """Two rows of a sample config swapped: each still equals its re-derivation, only its
    place does not."""
    config = next(c for c in _configs(folder) if not c.startswith("haystacks"))

    def swap(rows: list[dict]) -> None:
        rows[0], rows[1] = rows[1], rows[0]

    split = _rewrite_shard(folder, config, swap)
    return f"{config}: row order differs from the re-derivation: row 0 of split {split!r}"


def _row_code_revision(folder: Path) -> str:
    """One row's build facts edited (which no re-derivation reproduces): the row is named
    by the count of builds build_info.json records."""
    config = [c for c in _configs(folder) if not c.startswith("haystacks")][1]
    forged: list[str] = []

    def forge(rows: list[dict]) -> None:
        rows[2]["provenance"]["code_revision"] = "benchsmith==0.0.1+src.forged"
        forged.append(rows[2]["sample_id"])

    _rewrite_shard(folder, config, forge)
    return f"{config}/{forged[0]}"


STRUCTURE = {
    "config deleted whole": _config_deleted_whole,
    "rows reordered": _rows_reordered,
    "a row's code revision": _row_code_revision,
}


def test_an_untouched_copy_passes(built, tmp_path, capsys):
    folder, roots = _copy(built, tmp_path)
    code = main(["audit", str(folder), *roots])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "card, licence and croissant.json equal their re-rendering" in out
    assert "build_info.json field(s) equal their re-derivation" in out
    assert "row(s) built by the code build_info.json's rows_built_by records" in out


@pytest.mark.parametrize("tampers", [ACCOUNTS, STRUCTURE], ids=["accounts", "structure"])
def test_every_change_is_named_by_file_and_field(built, tmp_path, capsys, tampers):
    folder, roots = _copy(built, tmp_path)
    named = {name: tamper(folder) for name, tamper in tampers.items()}
    assert main(["audit", str(folder), *roots]) == 1
    failures = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    missed = {name: where for name, where in named.items()
              if not any(where in line for line in failures)}  # fmt: skip
    assert not missed, (missed, failures)
