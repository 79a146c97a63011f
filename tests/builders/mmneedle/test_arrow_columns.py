"""Columns built from and read through their buffers equal what pyarrow's own (pandas-importing)
conversions give, offsets and slices included."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from benchsmith.builders.mmneedle.arrow_columns import (
    int64_array,
    int64_values,
    list_lengths,
    list_values,
    string_array,
)


def test_string_columns_are_built_as_pyarrow_builds_them():
    for values in ([], ["n4-00000"], ["a", "", "ßü漢字", "x" * 300]):
        assert string_array(values).equals(pa.array(values, pa.string()))


def test_int64_columns_round_trip_and_respect_slices():
    values = np.array([5, -1, 2**40, 0, 7], dtype=np.int64)
    column = int64_array(values)
    assert column.equals(pa.array(values.tolist(), pa.int64()))
    assert int64_values(column).tolist() == values.tolist()
    assert int64_values(column.slice(2, 2)).tolist() == [2**40, 0]
    assert int64_values(int64_array(values[::2])).tolist() == [5, 2**40, 7]  # strided input


def test_int64_values_refuse_nulls_and_other_types():
    with pytest.raises(ValueError, match="without nulls"):
        int64_values(pa.array([1, None], pa.int64()))
    with pytest.raises(ValueError, match="int32"):
        int64_values(pa.array([1, 2], pa.int32()))


@pytest.mark.parametrize("list_type", [pa.list_, pa.large_list])
def test_list_lengths_of_lists_and_large_lists_and_their_slices(list_type):
    column = pa.array([[1, 2], [], [3], [4, 5, 6]], list_type(pa.int64()))
    assert list_lengths(column).tolist() == [2, 0, 1, 3]
    assert list_lengths(column.slice(1, 3)).tolist() == [0, 1, 3]


@pytest.mark.parametrize("list_type", [pa.list_, pa.large_list])
def test_list_values_are_what_flatten_gives_for_lists_and_their_slices(list_type):
    cell = pa.struct([("coco_image_id", pa.int64()), ("row", pa.int8())])
    rows = [[{"coco_image_id": 1, "row": 0}, {"coco_image_id": 2, "row": 1}], [],
            [{"coco_image_id": 3, "row": 0}], [{"coco_image_id": k, "row": 2} for k in (4, 5, 6)]]  # fmt: skip
    column = pa.array(rows, list_type(cell))
    for part in (column, column.slice(1, 3), column.slice(3, 1), column.slice(1, 1)):
        assert list_values(part).equals(part.flatten())
        assert (
            list_values(part).field("coco_image_id").equals(part.flatten().field("coco_image_id"))
        )
