"""Image fingerprints for leakage checks: an exact pixel hash and a 64-bit perceptual hash.

* ``pixel_sha256`` hashes the *decoded* RGB pixels (with the size), not the file bytes, so the
  same picture saved again losslessly (PNG with other metadata or compression, a different
  container) is an exact duplicate, while a lossy re-encode is not (cleanvision does the same
  with md5 over ``image.tobytes()``). Alpha is dropped by the RGB conversion and EXIF
  orientation is not applied: the stored pixels are compared, as models receive them.
* ``phash`` is ``imagehash.phash(image, hash_size=8)`` (DCT of a 32x32 grey thumbnail, 8x8 low
  frequencies against their median), which survives re-encoding and resizing. Its 8x8 booleans
  become one unsigned 64-bit int, **row-major, first element = most significant bit** (bit 63):
  the same number as ``int(str(imagehash_value), 16)``, so values agree with imagehash's hex
  strings and ``popcount(a ^ b)`` equals imagehash's ``a - b``.

* ``low_information`` marks flat images (a blank page, a solid colour): their grey thumbnail has
  almost no variation, so the pHash bits are decided by rounding noise and every flat image
  "matches" every other. Near-duplicate searches skip them (cleanvision reports such images as
  a separate ``low_information`` issue); exact duplicates still count via ``pixel_sha256``.

Undecodable bytes raise :class:`SourceError` from the single-image functions; the batch
function :func:`hash_images` records them per key instead (counted skips, never a crash).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from benchsmith.core.errors import SourceError
from benchsmith.core.executor import preload_in_pools
from benchsmith.core.limits import max_pixels, set_max_pixels
from benchsmith.core.progress import progress
from benchsmith.images.decode import decode_rgb

K = TypeVar("K", bound=Hashable)

PHASH_SIZE = 8
# what a hashing worker imports: the fork server loads them once (imagehash imports scipy's
# fftpack on its first pHash, 0.5 s), whichever pool of the process starts it
HASHING_MODULES = (__name__, "imagehash", "scipy.fftpack")
preload_in_pools(*HASHING_MODULES)
_BATCH_PER_WORKER = 64  # items handed to the pool at a time, per worker: bounds parent memory


@dataclass(frozen=True)
class ImageHashes:
    """Fingerprints of one decoded image."""

    pixel_sha256: str
    phash: int  # unsigned 64-bit, bit order documented in the module docstring
    low_information: bool = False  # flat image: its phash carries no structure


LOW_INFORMATION_STD = 2.0  # grey levels (0-255) of the 32x32 pHash thumbnail


def is_low_information(image: Image.Image) -> bool:
    """True when the 32x32 grey thumbnail pHash works on is nearly constant."""
    thumbnail = image.convert("L").resize((32, 32), Image.Resampling.LANCZOS)
    return float(np.asarray(thumbnail, dtype=np.float32).std()) < LOW_INFORMATION_STD


def decode_rgb_image(image_bytes: bytes, name: str | None = None) -> Image.Image:
    """Decode fully to RGB; corrupt or truncated bytes raise a SourceError naming ``name``."""
    return decode_rgb(image_bytes, name)


def rgb_sha256(image: Image.Image) -> str:
    """sha256 over ``b"RGB <width>x<height>\\n"`` + raw RGB bytes (size included so that a
    2x3 and a 3x2 image with the same byte stream differ)."""
    if image.mode != "RGB":
        image = image.convert("RGB")
    digest = hashlib.sha256(f"RGB {image.width}x{image.height}\n".encode("ascii"))
    digest.update(image.tobytes())
    return digest.hexdigest()


def phash_int(image: Image.Image) -> int:
    """imagehash's pHash (hash_size 8) as an unsigned 64-bit int, first bit most significant."""
    import imagehash  # imported here: it pulls in scipy, needed only when hashing

    bits = np.asarray(imagehash.phash(image, hash_size=PHASH_SIZE).hash, dtype=bool).ravel()
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


def pixel_sha256(image_bytes: bytes, *, name: str | None = None) -> str:
    """sha256 of the decoded RGB pixels (see :func:`rgb_sha256`)."""
    return rgb_sha256(decode_rgb_image(image_bytes, name))


# Fingerprints of the images this process hashed, by (sha256 of the file bytes, pixel limit):
# an audit re-derives the leakage report its build made, and one process often hashes the same
# source images for several checks. A file's sha256 costs ~1% of its decode and pHash.
_SEEN: OrderedDict[tuple[bytes, int], ImageHashes] = OrderedDict()
_SEEN_MAX = 65_536  # about 15 MB; the oldest are forgotten first
_SEEN_LOCK = threading.Lock()


def hash_image(image_bytes: bytes, *, name: str | None = None) -> ImageHashes:
    """Decode once, compute both fingerprints (or recall them: the same bytes under the same
    pixel limit always give the same fingerprints; an error is never remembered)."""
    key = (hashlib.sha256(image_bytes).digest(), max_pixels())
    with _SEEN_LOCK:
        if (seen := _SEEN.get(key)) is not None:
            _SEEN.move_to_end(key)
            return seen
    image = decode_rgb_image(image_bytes, name)
    hashes = ImageHashes(
        pixel_sha256=rgb_sha256(image),
        phash=phash_int(image),
        low_information=is_low_information(image),
    )
    with _SEEN_LOCK:
        _SEEN[key] = hashes
        if len(_SEEN) > _SEEN_MAX:
            _SEEN.popitem(last=False)
    return hashes


def _hash_or_error(
    image_bytes: bytes, limit: int | None = None
) -> tuple[ImageHashes | None, str | None]:
    """Worker task (module level so it pickles): hashes, or the error text for a skip.
    ``limit`` carries the parent's images.max_pixels into a worker process."""
    if limit is not None:
        set_max_pixels(limit)
    try:
        return hash_image(image_bytes), None
    except SourceError as exc:
        return None, str(exc).splitlines()[0]


def hash_images(
    items: Iterable[tuple[K, bytes]],
    *,
    workers: int = 1,
    total: int | None = None,
    executor: str = "local",
) -> tuple[dict[K, ImageHashes], dict[K, str]]:
    """Hash ``(key, image bytes)`` items: ``(hashes by key, error text by key)``.

    Undecodable images land in the error dict (the caller counts and reports the skips).
    Both dicts follow the input order, whatever ``workers`` or ``executor`` (``local``
    processes or ``ray`` tasks) is: batches go out in order and come back in order. Only a
    bounded number of batches of bytes is held at a time. Keys must be unique.
    """
    from benchsmith.core.executor import ExecutorConfig, open_executor

    # local: `workers` processes (one: this process); ray: that many tasks at once, or (for
    # workers <= 1) every CPU of the cluster. ExecutorConfig refuses an unknown executor.
    config = ExecutorConfig(executor, max(1, workers) if executor == "local" else
                            (workers if workers > 1 else 0))  # fmt: skip
    hashes: dict[K, ImageHashes] = {}
    errors: dict[K, str] = {}

    def record(key: K, result: tuple[ImageHashes | None, str | None]) -> None:
        if key in hashes or key in errors:
            raise ValueError(f"duplicate image key {key!r}")
        value, error = result
        if value is not None:
            hashes[key] = value
        else:
            errors[key] = error or "cannot decode image"

    if config.in_process:
        for key, data in progress(items, total=total, desc="hashing images", unit="img"):
            record(key, _hash_or_error(data))
        return hashes, errors
    with open_executor(config, preload=HASHING_MODULES) as pool:
        done = progress(_mapped(pool, items), total=total, desc="hashing images", unit="img")
        for key, result in done:
            record(key, result)
    return hashes, errors


def _mapped(
    executor: Any, items: Iterable[tuple[K, bytes]]
) -> Iterator[tuple[K, tuple[ImageHashes | None, str | None]]]:
    """Items through the executor in chunks of ``_BATCH_PER_WORKER`` images (at most
    ``2 x workers`` chunks in flight), keys kept here in order."""
    keys: list[K] = []

    def data() -> Iterator[bytes]:
        for key, image_bytes in items:
            keys.append(key)
            yield image_bytes

    task = partial(_hash_or_error, limit=max_pixels())
    for index, result in enumerate(executor.map(task, data(), chunksize=_BATCH_PER_WORKER)):
        yield keys[index], result
