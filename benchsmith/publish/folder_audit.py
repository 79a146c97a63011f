"""The audit of what a publisher writes beside the rows: that the folder's own accounts agree.

Every row is re-derived by the family (:mod:`benchsmith.publish.audit`); this checks the files
that describe the rows, which a forger edits to match a change or to make a claim: each split's
``num_examples`` and ``num_bytes`` in ``build_info.json`` against its shards, the card's front
matter (version, configs, each split's counts) against ``build_info.json``, and
``croissant.json`` (version, one file object per shard with its size and sha256, one record
set per config). A config deleted whole (shards and ``build_info`` entry) is still named by the
card and the Croissant file; a zeroed checksum or a changed count is named by file and field.
Every failure names the file, and the field as ``file: key.path``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.core.hashing import sha256_file
from benchsmith.core.text_differences import WHOLE, data_differences, differences, json_values
from benchsmith.family.audit_report import AuditReport
from benchsmith.family.base import CardRecipe
from benchsmith.hf.layout import splits_written
from benchsmith.hf.reader import readme_metadata
from benchsmith.publish.folder_texts import (
    CROISSANT_FILE,
    LICENSE_FILE,
    features_in,
    folder_texts,
)


def check_rederived_info(
    info: dict[str, Any], rederived: dict[str, Any], report: AuditReport
) -> None:
    """Each ``build_info.json`` key the family's audit re-derived against the recorded value;
    every differing field is named (``build_info.json: stats.positive_needles``)."""
    before = len(report.failures)
    for key, expected in rederived.items():
        found = json_values(info.get(key))
        for where, said, derived in data_differences(found, expected):
            field = key if where == WHOLE else f"{key}.{where}"
            report.fail(f"says {said}, the re-derivation gives {derived}",
                        path=f"build_info.json: {field}")  # fmt: skip
    if rederived and len(report.failures) == before:
        names = ", ".join(sorted(rederived))
        report.checked("folder", f"build_info.json field(s) equal their re-derivation ({names})")


def check_folder_texts(
    dataset_dir: Path, info: dict[str, Any], recipe: CardRecipe, report: AuditReport
) -> None:
    """The card, the licence and ``croissant.json`` as the publisher makes them from this
    folder's ``build_info.json`` and shards; each file that differs is named with the fields
    (front matter, JSON) or lines (the card's prose) that differ."""
    written = splits_written(info.get("configs"))
    if not all((dataset_dir / f).is_file() for w in written for f in w.files):
        report.checked("skipped", "card and croissant.json not re-rendered: a shard is missing")
        return  # the shard check names it
    try:
        features = features_in(dataset_dir, written)
        texts = folder_texts(recipe, info, written, features, dataset_dir)
    except (pa.ArrowException, OSError, ValueError) as exc:
        report.checked("skipped", f"card not re-rendered: a shard does not read ({exc})")
        return  # the shard check names it
    except Exception as exc:  # a build_info.json the family's card cannot be made from
        report.fail(f"the card cannot be rendered from it ({type(exc).__name__}: {exc})",
                    path="build_info.json")  # fmt: skip
        return
    if LICENSE_FILE not in texts and (dataset_dir / LICENSE_FILE).exists():
        report.fail("the publisher writes no licence file for this dataset: this one was added",
                    path=LICENSE_FILE)  # fmt: skip
    before = len(report.failures)
    for name, expected in texts.items():
        path = dataset_dir / name
        try:
            found = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            report.fail("missing: the publisher writes it", path=name)
            continue
        except (OSError, UnicodeDecodeError) as exc:
            report.fail(f"does not read as UTF-8 text ({exc})", path=name)
            continue
        for where, said, rendered in (
            differences(name, found, expected) if found != expected else ()
        ):
            report.fail(f"says {said}, re-rendered from build_info.json and the shards: "
                        f"{rendered}", path=f"{name}: {where}")  # fmt: skip
    if len(report.failures) == before:
        report.checked("folder", "card, licence and croissant.json equal their re-rendering")


def check_folder_accounts(
    dataset_dir: Path, info: dict[str, Any], report: AuditReport, recipe: CardRecipe | None = None
) -> None:
    """Check ``build_info.json``'s counts against the shards, then the card, the licence and
    ``croissant.json``: rendered again from the folder with the family's ``recipe`` and compared
    byte for byte; without a recipe, their metadata against ``build_info.json`` (run once per
    whole-dataset audit)."""
    configs = info.get("configs") or {}
    _check_counts(dataset_dir, configs, report)
    if recipe is None:
        _check_card(dataset_dir, info, report)
        _check_croissant(dataset_dir, info, report)
    else:
        check_folder_texts(dataset_dir, info, recipe, report)


def _check_counts(dataset_dir: Path, configs: dict[str, Any], report: AuditReport) -> None:
    for config, splits in configs.items():
        for split, written in splits.items():
            files = [dataset_dir / f for f in written.get("files", [])]
            if not all(f.is_file() for f in files):
                continue  # a missing shard is reported by name by the shard check
            try:
                rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            except (pa.ArrowException, OSError):
                continue  # an unparsable shard is reported by the shard check
            size = sum(f.stat().st_size for f in files)
            for key, found in (("num_examples", rows), ("num_bytes", size)):
                if written.get(key) != found:
                    report.fail(f"says {written.get(key)!r}, the shards hold {found}",
                                path=f"build_info.json: configs.{config}.{split}.{key}")  # fmt: skip
                else:
                    report.checked("folder", f"build_info {key} match the shards")


def _check_card(dataset_dir: Path, info: dict[str, Any], report: AuditReport) -> None:
    before = len(report.failures)
    configs = info.get("configs") or {}
    card = readme_metadata(dataset_dir)
    if not card:
        report.fail("the dataset card or its metadata is missing", path="README.md")
        return
    if str(card.get("version")) != str(info.get("version")):
        report.fail(f"says {card.get('version')!r}, build_info.json {info.get('version')!r}",
                    path="README.md: version")  # fmt: skip
    listed = [c.get("config_name") for c in card.get("configs") or [] if isinstance(c, dict)]
    for name in sorted(set(listed) ^ set(configs)):
        where = ("the card lists it, build_info.json does not" if name in listed
                 else "build_info.json lists it, the card does not")  # fmt: skip
        report.fail(f"config {name!r}: {where}", path="README.md: configs")
    for entry in card.get("dataset_info") or []:
        name = entry.get("config_name") if isinstance(entry, dict) else None
        for split in (entry.get("splits") or []) if name in configs else []:
            written = configs[name].get(split.get("name"), {})
            for key in ("num_examples", "num_bytes"):
                if split.get(key) != written.get(key):
                    report.fail(f"says {split.get(key)!r}, build_info.json {written.get(key)!r}",
                                path=f"README.md: dataset_info.{name}.{split.get('name')}.{key}")  # fmt: skip
    if len(report.failures) == before:
        report.checked("folder", "card metadata agrees with build_info.json")


def _check_croissant(dataset_dir: Path, info: dict[str, Any], report: AuditReport) -> None:
    path = dataset_dir / CROISSANT_FILE
    if not path.is_file():
        return  # a folder published before Croissant files; nothing claims one
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        report.fail(f"does not parse ({exc})", path=CROISSANT_FILE)
        return
    if str(document.get("version")) != str(info.get("version")):
        report.fail(f"says {document.get('version')!r}, build_info.json {info.get('version')!r}",
                    path=f"{CROISSANT_FILE}: version")  # fmt: skip
    before = len(report.failures)
    configs = info.get("configs") or {}
    shards = {f for splits in configs.values() for w in splits.values() for f in w.get("files", [])}
    objects = {d.get("@id"): d for d in document.get("distribution") or []
               if isinstance(d, dict) and d.get("@type") == "cr:FileObject"}  # fmt: skip
    for name in sorted(set(objects) ^ shards):
        where = ("it lists the file, build_info.json does not" if name in objects
                 else "build_info.json lists the file, it does not")  # fmt: skip
        report.fail(f"file {name}: {where}", path=f"{CROISSANT_FILE}: distribution")
    for name in sorted(set(objects) & shards):
        file = dataset_dir / name
        if not file.is_file():
            continue  # reported by the shard check
        for key, found in (("sha256", sha256_file(file)),  # streamed: shards reach 256 MiB
                           ("contentSize", f"{file.stat().st_size} B")):  # fmt: skip
            if objects[name].get(key) != found:
                report.fail(f"says {objects[name].get(key)!r}, the file's is {found!r}",
                            path=f"{CROISSANT_FILE}: distribution.{name}.{key}")  # fmt: skip
    records = [r.get("@id") or r.get("name") for r in document.get("recordSet") or []
               if isinstance(r, dict)]  # fmt: skip
    for name in sorted(set(records) ^ set(configs)):
        where = ("it has that record set, build_info.json has no such config" if name in records
                 else "build_info.json has that config, it has no record set for it")  # fmt: skip
        report.fail(f"config {name!r}: {where}", path=f"{CROISSANT_FILE}: recordSet")
    if len(report.failures) == before:
        report.checked("folder", "croissant.json agrees with the shards and build_info.json")
