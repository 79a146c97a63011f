"""What the shared commands need of a curated dataset: its audit hook, columns and scorer.

A curated folder is not a benchmark family (it has no build steps of its own), but it is read,
audited and scored like one: ``audit`` asks :meth:`CuratedKind.auditor`, ``curate`` and
``predict`` read its columns (the source's, unchanged), and ``score`` uses the scorer of the
family its rows came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


class CuratedKind:
    name = "curated"
    root_names = ("source",)
    audit_help = (
        "the decision log and the source files are unchanged, each row carries exactly its "
        "decisions and its source row is unchanged; an --id that curation dropped shows the "
        "stage and reason that removed it. --id: the source dataset's id (in a copied image "
        "config such as haystacks_n2: its key, e.g. stitched_id)"
    )

    def auditor(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        from benchsmith.curate.audit import CuratedAuditor

        return CuratedAuditor(dataset_dir, info, roots)

    def columns(self, info: dict[str, Any]):
        from benchsmith.hf.dataset_view import ColumnMap, ImageJoin

        columns = dict((info.get("source") or {}).get("columns") or {})
        join = columns.pop("image_join", None)
        return ColumnMap(**columns, image_join=ImageJoin(**join) if join else None)

    def not_samples(self, info: dict[str, Any], config: str) -> str | None:
        source = info.get("source") or {}
        if config in source.get("joined_configs", ()):
            return f"it holds the images the curated `{source.get('config')}` rows point to"
        return None

    def holds(self, info: dict[str, Any]) -> bool:
        """Whether ``info`` (a folder's build_info) is a curated folder's: the one test every
        command and export asks before evaluating a folder as its source family."""
        return info.get("family") == self.name

    def source_family(self, info: dict[str, Any]) -> str | None:
        """The benchmark family of the rows (whose scorer scores this dataset)."""
        source = info.get("source") or {}
        if source.get("family"):
            return source["family"]
        name = str(source.get("name") or "")  # "benchsmith/<family>@<version>" before 0.2
        return name.split("/", 1)[1].split("@", 1)[0] if name.startswith("benchsmith/") else None


CURATED = CuratedKind()


def rows_family(dataset_dir: Path) -> str | None:
    """The benchsmith family whose scorer scores this dataset's rows (a curated subset: its
    source's), or None for a dataset benchsmith did not build."""
    from benchsmith.hf.reader import BUILD_INFO, read_build_info

    if not (Path(dataset_dir) / BUILD_INFO).is_file():
        return None
    info = read_build_info(dataset_dir)
    family = info.get("family")
    return CURATED.source_family(info) if CURATED.holds(info) else family
