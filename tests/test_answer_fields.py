"""Rows that do not tell the answer: no published field but the answer columns names the gold.

Checked on what the README's first command builds, for every family: every image's file name
is its content hash (a MiniImageNet name starts with its class id, a ScanNet frame number says
which view follows another); MMIU marks no option as the gold outside ``answer`` and
``answer_index`` (how distractors were made is counted in provenance, not listed per option).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from project_fixtures import project_params

from benchsmith.builders import FAMILIES

NEUTRAL = re.compile(r"^[0-9a-f]{16}\.(jpg|png)$")


@pytest.fixture(scope="module")
def published(sample_project) -> dict[str, Path]:
    params = project_params(sample_project)
    return {f.name: sample_project / f.default_out(params) for f in FAMILIES}


def images_in(value) -> Iterator[dict]:
    if isinstance(value, dict) and set(value) == {"bytes", "path"}:
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from images_in(item)


def shards(folder: Path) -> Iterator[tuple[str, Path]]:
    for shard in sorted((folder / "data").rglob("*.parquet")):
        yield shard.parent.name, shard


@pytest.mark.parametrize("name", FAMILIES.names())
def test_every_published_image_is_named_by_its_content(published, name):
    seen = 0
    for config, shard in shards(published[name]):
        table = pq.read_table(shard)
        for column in table.column_names:
            for row, value in enumerate(table.column(column).to_pylist()):
                for image in images_in(value):
                    if image["bytes"] is None:  # a ScanNet reference, rendered by rehydrate
                        continue
                    seen += 1
                    where = (config, shard.name, column, row, image["path"])
                    if name == "mmneedle" and config.startswith("haystacks_"):
                        stitched = table.column("stitched_id")[row].as_py()
                        assert image["path"] == f"{stitched}.jpg", where  # a pool index
                        continue
                    assert NEUTRAL.match(image["path"]), where
                    digest = hashlib.sha256(image["bytes"]).hexdigest()[:16]
                    assert image["path"].startswith(digest), where
    assert seen > 0


def test_no_mmiu_field_but_the_answer_marks_the_gold(published):
    for config, shard in shards(published["mmiu"]):
        rows = pq.read_table(shard).to_pylist()
        for row in rows:
            assert "option_methods" not in row
            [decision] = [d for d in row["provenance"]["decisions"]
                          if d["reason"] == "DISTRACTOR_METHODS"]  # fmt: skip
            methods = json.loads(decision["evidence"])
            assert "gold" not in methods and sum(methods.values()) == row["num_options"] - 1
            # the distractors' methods are one multiset per item: every rotation shows the same
            assert all(method and method != "gold" for method in methods), (config, row["id"])
