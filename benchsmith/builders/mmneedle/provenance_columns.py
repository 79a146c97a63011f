"""MMNeedle's published columns built from the plan's Arrow columns, not from a dict per row.

Why: a full build publishes 40,504 haystack rows whose provenance names 850,000 cells' source
images, and 210,000 sample rows. Built as Python dicts
(:func:`~benchsmith.builders.mmneedle.rows.haystack_row`,
:func:`~benchsmith.builders.mmneedle.rows.sample_row`) and converted by
``pa.Table.from_pylist``, they took most of publish's time over the cost of writing its bytes.
Here every source entry is made once per COCO image (and the constant parts of a caption's entry
once per build) and the rows' lists are gathered with ``take`` over the plan's list offsets.

The values are the dict path's, byte for byte: every constant comes from
:func:`benchsmith.core.records.provenance` itself, and ``benchsmith audit`` re-derives each row
through the dict path and compares every column (tests publish both ways and compare the
shards' digests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from benchsmith.builders.mmneedle.arrow_columns import (
    int64_values,
    list_lengths,
    list_values,
    string_array,
)
from benchsmith.builders.mmneedle.features import HAYSTACK_FEATURES
from benchsmith.core.errors import BenchsmithError

# the Arrow types of a row's provenance struct and of its two lists, as the features write them
PROVENANCE_TYPE = HAYSTACK_FEATURES.arrow_schema.field("provenance").type
SOURCES_TYPE = PROVENANCE_TYPE.field("sources").type
DECISIONS_TYPE = PROVENANCE_TYPE.field("decisions").type


@dataclass(frozen=True)
class ProvenanceTemplate:
    """One build's provenance without its lists: ``fields`` are the constant values (family,
    builder version, code revision, params hash, seed) as ``provenance`` writes them."""

    fields: dict[str, Any]

    @classmethod
    def of(cls, provenance_of: Callable[..., dict[str, Any]]) -> ProvenanceTemplate:
        """``provenance_of(sources, decisions)``: the family's row provenance function."""
        made = provenance_of([], [])
        return cls({k: v for k, v in made.items() if k not in ("sources", "decisions")})

    def column(self, sources: pa.Array, decisions: pa.Array) -> pa.StructArray:
        """The provenance of ``len(sources)`` rows: these lists, these constants."""
        if len(sources) != len(decisions):
            raise ValueError(f"{len(sources)} rows of sources, {len(decisions)} of decisions")
        arrays = []
        for field in PROVENANCE_TYPE:
            if field.name == "sources":
                arrays.append(sources)
            elif field.name == "decisions":
                arrays.append(decisions)
            else:
                value = pa.scalar(self.fields[field.name], field.type)
                arrays.append(pa.repeat(value, len(sources)))
        return pa.StructArray.from_arrays(arrays, fields=list(PROVENANCE_TYPE))


class SourceTable:
    """Provenance source entries keyed by an integer id (a COCO image id), each built once by
    the family's own function and looked up for many rows with ``take``."""

    def __init__(self, keys: Sequence[int], entries: list[dict[str, str]], what: str):
        order = np.argsort(np.asarray(keys, dtype=np.int64), kind="stable")
        self.keys = np.asarray(keys, dtype=np.int64)[order]
        self.entries = pa.array([entries[k] for k in order], type=SOURCES_TYPE.value_type)
        self.what = what

    def take(self, keys: np.ndarray) -> pa.Array:
        """The entries of ``keys``, in their order; an unknown key is an error naming it."""
        at = np.searchsorted(self.keys, keys)
        at = np.minimum(at, max(len(self.keys) - 1, 0))
        if len(keys) and (not len(self.keys) or not np.array_equal(self.keys[at], keys)):
            missing = sorted(set(keys.tolist()) - set(self.keys.tolist()))
            raise BenchsmithError(
                f"{len(missing)} {self.what}(s) not among the build's sources: {missing[:5]}",
                fix="re-run `benchsmith build mmneedle plan` and `render`: the folders disagree",
            )
        return self.entries.take(pa.array(at, type=pa.int64()))


def list_column(offsets: np.ndarray, values: pa.Array, list_type: pa.DataType) -> pa.ListArray:
    """A list column from offsets counted from 0 and its values."""
    offsets = pa.array(np.asarray(offsets, dtype=np.int32), type=pa.int32())
    return pa.ListArray.from_arrays(offsets, values, type=list_type)


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def no_decisions(rows: int) -> pa.ListArray:
    empty = pa.array([], type=DECISIONS_TYPE.value_type)
    return list_column(np.zeros(rows + 1), empty, DECISIONS_TYPE)


def decisions_column(decisions: list[list[dict[str, str]]]) -> pa.ListArray:
    """Rows' decision lists, already normalized by ``provenance``."""
    return pa.array(decisions, type=DECISIONS_TYPE)


def cell_sources(cells: pa.Array, images: SourceTable) -> pa.ListArray:
    """A haystack row's sources: its cells' source images, cell by cell."""
    ids = int64_values(list_values(cells).field("coco_image_id"))
    return list_column(offsets_of(list_lengths(cells)), images.take(ids), SOURCES_TYPE)


def needle_sources(
    needles: pa.Array, captions: Callable[[np.ndarray], pa.Array], images: SourceTable
) -> pa.ListArray:
    """A sample row's sources: for each needle its caption, then its source image."""
    values = list_values(needles)
    caption_entries = captions(int64_values(values.field("caption_id")))
    image_entries = images.take(int64_values(values.field("coco_image_id")))
    count = len(values)
    interleaved = np.empty(2 * count, dtype=np.int64)
    interleaved[0::2] = np.arange(count)
    interleaved[1::2] = np.arange(count) + count
    both = pa.concat_arrays([caption_entries, image_entries]).take(pa.array(interleaved))
    return list_column(2 * offsets_of(list_lengths(needles)), both, SOURCES_TYPE)


def caption_entries(
    template: dict[str, str], id_of: Callable[[int], str]
) -> Callable[[np.ndarray], pa.Array]:
    """Caption source entries that differ only in their id (``id_of(caption_id)``, the
    family's own): ``template`` is one entry as ``provenance`` wrote it, whose other fields
    every caption shares."""

    def entries(caption_ids: np.ndarray) -> pa.Array:
        arrays = []
        for field in SOURCES_TYPE.value_type:
            if field.name == "id":
                arrays.append(string_array([id_of(c) for c in caption_ids.tolist()]))
            else:
                value = pa.scalar(template[field.name], field.type)
                arrays.append(pa.repeat(value, len(caption_ids)))
        return pa.StructArray.from_arrays(arrays, fields=list(SOURCES_TYPE.value_type))

    return entries
