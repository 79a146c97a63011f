"""A curated dataset's publication: the kept rows, their decisions, a card, ``decisions.parquet``.

OUT_DIR is a dataset in Hugging Face layout with the source's config and split; rows are the
source rows unchanged plus ``difficulty`` and ``n_correct`` columns, and their ``provenance``
carries the curation decisions (and a source entry whose sha256 is the digest of the source
row, which ``benchsmith audit`` re-checks). Images joined from another config (MMNeedle's
haystacks) are copied over as they are, so the output loads on its own. The one publisher
(:func:`benchsmith.publish.publisher.publish`) stages and writes the folder.
"""

from __future__ import annotations

import json
import shutil
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import datasets
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith.core.hashing import params_hash, sha256_file
from benchsmith.core.records import provenance
from benchsmith.curate.config import CurateConfig
from benchsmith.curate.executor import CurationResult
from benchsmith.family.base import Card, ConfigSpec, CopiedConfig, Publication
from benchsmith.hf.card import render_text
from benchsmith.hf.dataset_view import DatasetView, row_digest
from benchsmith.hf.features import PROVENANCE_FEATURE
from benchsmith.hf.layout import SplitWritten
from benchsmith.hf.reader import readme_metadata, split_files
from benchsmith.publish.croissant import carried_rai
from benchsmith.stages import STAGES

FAMILY = "curated"
DECISIONS_FILE = "decisions.parquet"


def output_features(view: DatasetView) -> datasets.Features:
    source = datasets.Features.from_arrow_schema(pq.read_schema(view.files[0]))
    features = {k: v for k, v in source.items() if k not in ("difficulty", "n_correct")}
    features["difficulty"] = datasets.Value("string")
    features["n_correct"] = datasets.Value("int64")
    if "provenance" not in features:
        features["provenance"] = PROVENANCE_FEATURE
    return datasets.Features(features)


def columns_dict(view: DatasetView) -> dict[str, Any]:
    return {
        k: (vars(v) if k == "image_join" and v is not None else v)
        for k, v in vars(view.columns).items()
    }


def source_info(view: DatasetView) -> dict[str, Any]:
    """The source folder's build_info, or {} for a dataset benchsmith did not build."""
    info = view.dataset_dir / "build_info.json"
    return json.loads(info.read_text(encoding="utf-8")) if info.is_file() else {}


def source_name(view: DatasetView) -> str:
    data = source_info(view)
    if data:
        return f"benchsmith/{data.get('family', view.dataset_dir.name)}@{data.get('version', '')}"
    return view.dataset_dir.name


def source_family(view: DatasetView) -> str | None:
    """The benchmark family the rows come from (a curated source passes its own through)."""
    data = source_info(view)
    if data.get("family") == FAMILY:
        return (data.get("source") or {}).get("family")
    return data.get("family")


def curated_provenance(
    row: dict[str, Any],
    view: DatasetView,
    decisions: list[dict[str, Any]],
    p_hash: str,
    seed: int,
) -> dict[str, Any]:
    """The source's provenance (if any) extended with the curation decisions and a row source."""
    row_source = {
        "dataset": source_name(view),
        "split": view.split,
        "id": str(row[view.columns.id]),
        "file": f"{view.config}/{view.split}",
        "sha256": row_digest(row),
        "license": "",
        "url": "",
    }
    steps = [
        {
            "stage": f"curate/{d['stage']}",
            "action": d["action"],
            "reason": d["reason"] or "",
            "evidence": d["evidence"],
        }
        for d in decisions
    ]
    base = row.get("provenance")
    if base:
        return {
            **base,
            "sources": [*base["sources"], row_source],
            "decisions": [*base["decisions"], *steps],
        }
    return provenance(
        family=FAMILY, params_hash=p_hash, seed=seed, sources=[row_source], decisions=steps
    )


def curated_row(
    row: dict[str, Any],
    view: DatasetView,
    decisions: list[dict[str, Any]],
    difficulty: tuple[str, int],
    p_hash: str,
    seed: int,
) -> dict[str, Any]:
    """A kept source row as published: unchanged, plus difficulty, n_correct and provenance."""
    out = {k: v for k, v in row.items() if k not in ("difficulty", "n_correct")}
    out["difficulty"], out["n_correct"] = difficulty
    out["provenance"] = curated_provenance(row, view, decisions, p_hash, seed)
    return out


def difficulty_of(decisions: list[dict[str, Any]]) -> tuple[str, int]:
    """(bin, n_correct) from a sample's difficulty decision; ("unrated", -1) without one."""
    from benchsmith.stages.difficulty_bins import BinEdges

    for decision in decisions:
        if decision["stage"] == "difficulty":
            evidence = json.loads(decision["evidence"])
            n_correct = len(evidence["correct_models"])
            return BinEdges(**evidence["edges"]).classify(n_correct), n_correct
    return "unrated", -1


def curated_rows(
    view: DatasetView, result: CurationResult, p_hash: str, seed: int
) -> Iterator[list[dict[str, Any]]]:
    """The kept rows, one list per source batch (each becomes one row group)."""
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for row in result.log.rows:
        by_sample.setdefault(row["sample_id"], []).append(row)
    kept = result.kept()
    for batch in view.raw_batches():
        rows = []
        for row in batch.to_pylist():
            sample_id = str(row[view.columns.id])
            if sample_id not in kept:
                continue
            difficulty = result.difficulty.get(sample_id, ("unrated", -1))
            decisions = by_sample.get(sample_id, [])
            rows.append(curated_row(row, view, decisions, difficulty, p_hash, seed))
        yield rows


def joined_config_names(view: DatasetView) -> list[str]:
    """Configs the split's rows point into: ``image_join.config`` filled from each row."""
    join = view.columns.image_join
    if join is None:
        return []
    fields = sorted({name for _, name, _, _ in string.Formatter().parse(join.config) if name})
    if not fields:
        return [join.config]
    table = pads.dataset([str(p) for p in view.files], format="parquet").to_table(columns=fields)
    return sorted({join.config.format(**row) for row in table.to_pylist()})


def copy_joined_configs(staging: Path, view: DatasetView) -> list[CopiedConfig]:
    """Configs the rows point into (e.g. ``haystacks_n2``) are copied unchanged, and only
    those, so the output loads on its own without dragging along the source's other configs."""
    join = view.columns.image_join
    copied: list[CopiedConfig] = []
    for config in joined_config_names(view):
        files = split_files(view.dataset_dir, config, join.split)
        relative = [path.relative_to(view.dataset_dir) for path in files]
        for path, rel in zip(files, relative, strict=True):
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, staging / rel)
        written = SplitWritten(
            config=config,
            split=join.split,
            num_examples=sum(pq.ParquetFile(p).metadata.num_rows for p in files),
            num_bytes=sum(p.stat().st_size for p in files),
            files=[rel.as_posix() for rel in relative],
        )
        features = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))
        copied.append(CopiedConfig(written, features))
    return copied


# card metadata a subset inherits from its source unchanged (its size and configs are its own)
CARRIED_METADATA = ("license", "license_name", "license_link", "language", "task_categories")


def carried_metadata(dataset_dir: Path, source: str) -> dict[str, Any]:
    """The source card's licence, language and task metadata; its source datasets plus the
    source itself; its tags plus ``curated``. A licence file the source links to is carried
    as text (:func:`carried_license`), so the link is the publisher's ``LICENSE.md``."""
    meta = readme_metadata(dataset_dir)
    out = {key: meta[key] for key in CARRIED_METADATA if meta.get(key)}
    if out.get("license_link") and not str(out["license_link"]).startswith(("http:", "https:")):
        del out["license_link"]
    out["source_datasets"] = unique([*as_list(meta.get("source_datasets")), source])
    out["tags"] = unique([*as_list(meta.get("tags")), "benchsmith", "curated"])
    return out


def carried_license(dataset_dir: Path) -> str:
    """The source's licence terms: the local file its card links to (without its title), or
    the legacy ``license_details`` text; "" when it has neither."""
    meta = readme_metadata(dataset_dir)
    link = str(meta.get("license_link") or "")
    path = dataset_dir / link
    if link and not link.startswith(("http:", "https:")) and path.is_file():
        text = path.read_text(encoding="utf-8")
        return text.split("\n\n", 1)[1] if text.startswith("# ") and "\n\n" in text else text
    return str(meta.get("license_details") or "")


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value] if value else []


def unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


class CuratedPublication(Publication):
    """The survivors of one curation run over one config and split of a dataset."""

    family = FAMILY
    card_template = "curated.md.j2"
    not_rederived: ClassVar[dict[str, str]] = {
        "provenance.code_revision, provenance.builder_version": "for rows whose source row has "
        "no provenance of its own, the curation run's, recorded, not derivable",
    }
    audit_how = "each kept row is its source row plus the difficulty and provenance its logged decisions give; the decision log and the source files are checked by sha256"

    def __init__(self, view: DatasetView, result: CurationResult, config: CurateConfig):
        self.view = view
        self.result = result
        self.config = config
        self.settings = config.hashable()
        self.params_hash = params_hash({"curate": self.settings, "columns": columns_dict(view)})

    def input_paths(self) -> list[Path]:
        return [self.view.dataset_dir]

    def configs(self) -> Iterator[ConfigSpec]:
        view = self.view
        yield ConfigSpec(
            view.config,
            output_features(view),
            (view.split,),
            lambda split, max_bytes: curated_rows(
                view, self.result, self.params_hash, self.config.seed
            ),
        )

    def copy_configs(self, staging: Path) -> list[CopiedConfig]:
        return copy_joined_configs(staging, self.view)

    def write_extra(self, staging: Path) -> dict[str, Any]:
        pq.write_table(self.result.log.table(), staging / DECISIONS_FILE, compression="zstd")
        return {"decisions_sha256": sha256_file(staging / DECISIONS_FILE)}

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        view, result = self.view, self.result
        return {
            "params": self.settings,
            "params_hash": self.params_hash,
            "seed": self.config.seed,
            "roots": {"source": view.dataset_dir.as_posix()},
            "source": {
                "name": source_name(view),
                "family": source_family(view),
                "config": view.config,
                "split": view.split,
                "columns": columns_dict(view),
                "files": {
                    p.relative_to(view.dataset_dir).as_posix(): sha256_file(p) for p in view.files
                },
                "joined_configs": [w.config for w in written if w.config != view.config],
            },
            "inputs": result.inputs,
            "counts": {"source": len(result.log.order), "kept": len(result.kept())},
            "stages": result.log.stage_counts(),
            "skipped_stages": result.skipped_stages,
            "undecided": result.undecided_counts(),
            "reports": result.reports,
        }

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        return curated_card(info, written, self.view.dataset_dir)

    def summary(self, info: dict[str, Any]) -> str:
        return f"curate: {info['counts']['kept']} rows"


def curated_card(info: dict[str, Any], written: list[SplitWritten], source_dir: Path) -> Card:
    """The card of a curated folder, from its build_info, its splits and the source folder it
    carries metadata, licence and Responsible-AI fields from (what the audit re-renders)."""
    main = next(w for w in written if w.config == info["source"]["config"])
    metadata = {
        "pretty_name": f"{info['source']['name']} {info['source']['config']} "
        "(curated by benchsmith)",
        **carried_metadata(source_dir, info["source"]["name"]),
    }
    counts = {s["stage"]: s["reasons"] for s in info["stages"]}
    sections, legend = [], []
    for stage in STAGES:
        report = info["reports"].get(stage.name)
        if report is not None and stage.card_section:
            params = info["params"]
            settings = params if stage.params_key is None else params[stage.params_key]
            sections.append(
                render_text(stage.card_section, {"report": report, "settings": settings})
            )
        for code, meaning in stage.reasons.items():
            n = sum(v for k, v in counts.get(stage.name, {}).items() if k.endswith(f":{code}"))
            legend.append({"stage": stage.name, "code": code, "meaning": meaning, "count": n})
    context = {"info": info, "written": main, "sections": sections, "legend": legend}
    stages = "Curated by benchsmith stages: " + ", ".join(
        s["stage"] for s in info["stages"]) + " (rows dropped per reason in the card)."  # fmt: skip
    rai = carried_rai(source_dir, stages)
    return Card(metadata, context, main.config, carried_license(source_dir),
                rai={**rai, "description": metadata["pretty_name"]})  # fmt: skip
