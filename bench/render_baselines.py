"""The two references ``render_throughput.py`` times ``render_mmneedle`` against.

* **baseline**: the original per-cell algorithm, in one process (``speedup = baseline / ours``).
* **bare**: only the unavoidable work, decode every source once and encode every output once,
  on the same number of forkserver workers as ours (``overhead = ours / bare``).
* **bare + resize**: bare plus the exact resize of every source to its cell, the floor if the
  resize is counted as unavoidable (``overhead_vs_resize_floor = ours / bare_resize``).

Only light modules are imported at module level: forkserver workers re-run the benchmark
script's imports, and bare workers unpickle their task functions from this module.
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from render_case import CELL, CHECK_FIRST, QUALITY, WORKERS, GridCase

from benchsmith.builders.mmneedle.stitching import (
    encode_jpeg,
    load_cell_rgbx,
    render_stitched_image,
)

# --- baseline: the original algorithm ------------------------------------------------------


def baseline_render(case: GridCase) -> tuple[list[str], list[bytes]]:
    """Original per-cell algorithm, one process; returns (sha256 per output, first outputs).

    Per cell: open the source at full size, convert to RGB, resize to 256x256 with Pillow's
    default filter, paste on a black canvas; encode JPEG quality 75; nothing cached.
    Hashing inside the timed loop costs ~0.1 ms per output (<0.5% of the loop), and keeps
    memory flat instead of holding every output for the equality check.
    """
    digests: list[str] = []
    first: list[bytes] = []
    side = case.grid * CELL
    for cells in case.cells:
        canvas = Image.new("RGB", (side, side))
        for row, col, name in cells:
            with Image.open(case.images_dir / name) as source:
                tile = source.convert("RGB").resize((CELL, CELL))
            canvas.paste(tile, ((col - 1) * CELL, (row - 1) * CELL))
        buffer = io.BytesIO()
        canvas.save(buffer, "JPEG", quality=QUALITY)
        data = buffer.getvalue()
        digests.append(hashlib.sha256(data).hexdigest())
        if len(first) < CHECK_FIRST:
            first.append(data)
    return digests, first


# --- bare cost: decode each source once + encode each output once ---------------------------

_bare: dict[str, Any] = {}


def tune_malloc() -> bool:
    """The glibc malloc settings ours' render workers apply to themselves (see
    ``benchsmith.builders.mmneedle.render_pool``): never trim the heap, serve blocks < 1 GiB from it, so
    freed image buffers are reused instead of page-faulted in again. False if not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False
    return True


def _bare_init(canvas_path: str, shape: tuple[int, ...], malloc_tuned: bool) -> None:
    if malloc_tuned:
        tune_malloc()
    _bare["canvases"] = np.memmap(canvas_path, dtype=np.uint8, mode="r", shape=shape)


def _bare_decode(path: str) -> int:
    with Image.open(path) as image:
        image.load()
        return image.size[0]


def _bare_decode_resize(path: str) -> int:
    """Decode plus the exact resize to the cell: the floor if resizing counts as unavoidable
    work (``load_cell_rgbx`` is the cheapest exact path: the RGBX decode and the byte-exact
    reimplementation of Pillow's bicubic resize; nothing cached or hashed)."""
    return load_cell_rgbx(path, CELL)[0].shape[0]


def _bare_encode(index: int) -> int:
    """Encode one canvas, handed to Pillow as RGBX without a copy (the cheapest way in: an RGB
    array would first be unpacked to Pillow's 4-byte pixels; the JPEG bytes are the same)."""
    canvas = _bare["canvases"][index]
    size = (canvas.shape[1], canvas.shape[0])
    return len(encode_jpeg(Image.frombuffer("RGBX", size, canvas, "raw", "RGBX", 0, 1), QUALITY))


def build_canvases(case: GridCase, path: Path) -> tuple[int, ...]:
    """Untimed setup for the bare run: every output canvas, pixel-identical to ours' canvases.

    Stored as a memory-mapped file (like ours' cell cache) so worker processes read them from
    the page cache instead of receiving 3-12 MB pickles, which would bias bare upwards.
    """
    cells = {name: load_cell_rgbx(case.images_dir / name, CELL)[0] for name in case.source_names()}
    side = case.grid * CELL
    shape = (len(case.cells), side, side, 4)
    canvases = np.memmap(path, dtype=np.uint8, mode="w+", shape=shape)
    for index, row in enumerate(case.cells):
        ordered = [cells[name] for _, _, name in sorted(row)]  # (row, col) order = row-major
        canvases[index] = np.asarray(render_stitched_image(ordered, case.grid))
    canvases.flush()
    del canvases
    return shape


def bare_render(
    case: GridCase,
    canvas_path: Path,
    shape: tuple[int, ...],
    malloc_tuned: bool = False,
    resize: bool = False,
) -> None:
    """The unavoidable work on ``WORKERS`` forkserver processes, including pool start-up.

    Plain decode + encode by default; ``malloc_tuned`` gives the bare workers the same glibc
    malloc settings ours' workers use, which makes bare a tighter lower bound; ``resize`` also
    resizes every decoded source to its cell (the floor when the resize counts as unavoidable),
    always with the tuned malloc: untuned, its workers take ~10x the page faults of plain bare
    (every freed 1.2 MB decode buffer is returned to the kernel), which would flatter ours.
    """
    paths = [os.fspath(case.images_dir / name) for name in case.source_names()]
    with multiprocessing.get_context("forkserver").Pool(
        WORKERS,
        initializer=_bare_init,
        initargs=(os.fspath(canvas_path), shape, malloc_tuned or resize),
    ) as pool:
        decode = _bare_decode_resize if resize else _bare_decode
        for _ in pool.imap(decode, paths, chunksize=16):
            pass
        for _ in pool.imap(_bare_encode, range(len(case.cells)), chunksize=4):
            pass
