"""The images a text-to-image run generated: written by ``benchsmith predict``, read by the
judge in ``benchsmith score``.

Why content-addressed files beside the predictions file (``FILE-images/<sha256>.<ext>``): a
JSONL line stays a small text row that names its image, the folder can be copied or archived
with the file, a rerun or a repeated image costs nothing, and the name is the check: an image
whose bytes no longer hash to its name, or a row whose ``image_sha256`` disagrees, is an error
naming the line, never a silently judged stand-in.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from benchsmith.core.errors import BenchsmithError

HASH_NAME = re.compile(r"^[0-9a-f]{64}$")


def images_folder(predictions: Path) -> Path:
    """Where a predictions file's generated images live: ``FILE-images`` beside it."""
    return predictions.with_name(f"{predictions.stem}-images")


def store_image(predictions: Path, image: bytes) -> tuple[str, str]:
    """Write ``image`` once under its sha256 next to ``predictions``; returns (its path
    relative to the predictions file's folder, as a row's ``response``; its sha256)."""
    from PIL import Image

    from benchsmith.core.atomic import atomic_write_bytes
    from benchsmith.core.hashing import sha256_bytes

    digest = sha256_bytes(image)
    with Image.open(io.BytesIO(image)) as decoded:
        kind = (decoded.format or "PNG").lower()
    extension = "jpg" if kind == "jpeg" else kind
    folder = images_folder(predictions)
    path = folder / f"{digest}.{extension}"
    if not path.is_file():
        atomic_write_bytes(path, image)
    return f"{folder.name}/{path.name}", digest


def read_generated_image(predictions: Path, response: str, sha256: str | None, line: int) -> bytes:
    """The bytes a row's ``response`` names (relative to the predictions file's folder),
    checked against its name and its row's ``image_sha256``."""
    from benchsmith.core.hashing import sha256_bytes

    where = f"{predictions}:{line}"
    relative = Path(response)
    if relative.is_absolute() or ".." in relative.parts:
        raise BenchsmithError(f"the image path {response!r} leaves the predictions' folder",
                              path=where, fix="name images relative to the predictions file")  # fmt: skip
    path = predictions.parent / relative
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchsmithError(
            f"the generated image {response} is missing ({exc.strerror})", path=where,
            fix=f"keep the {relative.parts[0] if len(relative.parts) > 1 else 'images'}/ folder "
            "next to the predictions file (copy both together)",
        ) from None  # fmt: skip
    digest = sha256_bytes(data)
    expected = {sha256} if sha256 else set()
    if HASH_NAME.match(path.stem):
        expected.add(path.stem)
    if expected and expected != {digest}:
        raise BenchsmithError(
            f"the generated image {response} has sha256 {digest[:12]}..., not the "
            f"{', '.join(sorted(e[:12] + '...' for e in expected))} its row names",
            path=where, fix="the file was changed after predict wrote it: predict it again",
        )  # fmt: skip
    return data
