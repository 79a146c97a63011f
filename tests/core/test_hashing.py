"""Content hashes: streamed file hashes, order-independent params hashes, stable integers."""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

import pytest

from benchsmith.core.hashing import (
    canonical_json,
    params_hash,
    sha256_bytes,
    sha256_file,
    stable_int,
)


@pytest.mark.parametrize(
    "size",
    [0, 1, (1 << 20) - 1, 1 << 20, 2 << 20, 3 * (1 << 20) + 12345],
    ids=["empty", "one-byte", "chunk-minus-1", "one-chunk", "two-chunks", "3.01MiB"],
)
def test_sha256_file_matches_hashlib(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    expected = hashlib.sha256(data).hexdigest()
    assert sha256_file(path) == expected
    assert sha256_file(str(path)) == expected
    assert sha256_bytes(data) == expected


def test_sha256_file_missing_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        sha256_file(tmp_path / "absent.bin")


def test_params_hash_independent_of_key_order() -> None:
    first = {"seed": 0, "grids": [1, 2, 4, 8], "sizes": {"pool_size": 20, "samples": 10}}
    second = {"sizes": {"samples": 10, "pool_size": 20}, "grids": [1, 2, 4, 8], "seed": 0}
    assert list(first) != list(second)
    assert params_hash(first) == params_hash(second)
    assert canonical_json(first) == canonical_json(second)


@pytest.mark.parametrize(
    "changed",
    [
        {"seed": 1, "grids": [1, 2, 4, 8], "sizes": {"pool_size": 20}},
        {"seed": 0, "grids": [1, 2, 4], "sizes": {"pool_size": 20}},
        {"seed": 0, "grids": [8, 4, 2, 1], "sizes": {"pool_size": 20}},  # list order matters
        {"seed": 0, "grids": [1, 2, 4, 8], "sizes": {"pool_size": 21}},
        {"seed": "0", "grids": [1, 2, 4, 8], "sizes": {"pool_size": 20}},  # type matters
        {"seed": 0, "grids": [1, 2, 4, 8], "sizes": {"pool_size": 20}, "extra": None},
    ],
)
def test_params_hash_sensitive_to_values(changed: dict) -> None:
    base = {"seed": 0, "grids": [1, 2, 4, 8], "sizes": {"pool_size": 20}}
    assert params_hash(changed) != params_hash(base)


def test_params_hash_is_sha256_hex() -> None:
    digest = params_hash({"a": 1})
    assert len(digest) == 64
    assert int(digest, 16) >= 0


@pytest.mark.parametrize("text", ["", "mmneedle", "m10_n8_k5", "café ☕", "x" * 1000])
def test_stable_int_matches_independent_computation(text: str) -> None:
    (expected,) = struct.unpack("<I", hashlib.sha256(text.encode("utf-8")).digest()[:4])
    value = stable_int(text)
    assert value == expected
    assert 0 <= value < 2**32
    assert stable_int(text) == value


def test_stable_int_differs_for_different_text() -> None:
    values = {stable_int(f"scope-{i}") for i in range(200)}
    assert len(values) == 200
