"""Zip bombs for the tests of every command that opens an archive: a few hundred KB that
inflate to tens of MiB, under the member name the real archive has, so only the bound on
inflation can refuse them."""

from __future__ import annotations

import zipfile
from pathlib import Path


def write_zip_bomb(path: Path, member: str, inflated_mib: int = 64) -> Path:
    """``path``: one member ``member`` of zeros, ``inflated_mib`` MiB once inflated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open(member, "w") as sink,
    ):
        for _ in range(inflated_mib):
            sink.write(bytes(1 << 20))
    return path
