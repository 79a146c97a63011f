"""MiniImageNet in the Ravi-Larochelle split: the layout, the reader, and its checks.

Layout (as distributed with Ravi & Larochelle's few-shot split)::

    ROOT/train.csv  ROOT/val.csv  ROOT/test.csv     header ``filename,label``
    ROOT/images/n0153282900000005.jpg ...           flat layout, or
    ROOT/images/n01532829/n0153282900000005.jpg     per-class layout

The images are ImageNet's, so there is no download: the user points at a copy they have
(or converts a Hugging Face parquet copy with :func:`miniimagenet_from_hf_parquet`).

Many copies also ship ``mini-imagenet-cache-*.pkl``. Unpickling runs arbitrary code, so pickled
caches are never opened: they are listed, logged as ignored, and the CSVs + JPEGs are read.

The sample writer and the parquet converter live in their own modules
(``miniimagenet_sample``, ``miniimagenet_parquet``) and are re-exported here lazily.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log

SPLITS = ("train", "val", "test")
RAVI_COUNTS = {"train": 64, "val": 16, "test": 20}
RAVI_IMAGES_PER_CLASS = 600
CSV_HEADER = ("filename", "label")
IMAGES_DIRNAME = "images"
PICKLE_SUFFIXES = (".pkl", ".pickle")
LAYOUTS = ("flat", "per_class")

_LAYOUT_FIX = (
    "point the MiniImageNet root at the folder holding train.csv, val.csv, test.csv and images/ "
    "(Ravi-Larochelle split), or convert a parquet copy with miniimagenet_from_hf_parquet"
)


@dataclass(frozen=True)
class MiniImage:
    filename: str  # as in the CSV, e.g. "n0153282900000005.jpg"
    label: str  # wnid, e.g. "n01532829"
    split: str
    path: Path  # resolved file (flat images/<filename> or per-class images/<label>/<filename>)


@dataclass
class MiniImageNet:
    """The three splits of one MiniImageNet copy, rows in CSV order."""

    root: Path
    splits: dict[str, list[MiniImage]]  # CSV order
    layout: str  # "flat" | "per_class"
    csv_sha256: dict[str, str] = field(default_factory=dict)  # split -> sha256 of its CSV
    ignored_pickles: list[Path] = field(default_factory=list)  # never opened

    def classes(self, split: str) -> dict[str, list[MiniImage]]:
        """label -> images sorted by filename, labels sorted (independent of CSV row order)."""
        if split not in self.splits:
            raise ValueError(f"unknown MiniImageNet split {split!r}; expected one of {SPLITS}")
        by_label: dict[str, list[MiniImage]] = defaultdict(list)
        for image in self.splits[split]:
            by_label[image.label].append(image)
        return {
            label: sorted(by_label[label], key=lambda image: image.filename)
            for label in sorted(by_label)
        }

    def csv_path(self, split: str) -> Path:
        return csv_path(self.root, split)


def csv_path(root: str | Path, split: str) -> Path:
    return Path(root) / f"{split}.csv"


def read_miniimagenet(
    root: str | Path,
    *,
    expect_classes: dict[str, int] | None = None,
    expect_images_per_class: int | None = None,
    check_files: bool = True,
) -> MiniImageNet:
    """Read and check the three CSVs (and, by default, that every named image exists).

    ``expect_classes`` (e.g. :data:`RAVI_COUNTS`) and ``expect_images_per_class`` (e.g.
    :data:`RAVI_IMAGES_PER_CLASS`) turn a partial or re-split copy into an error instead of a
    silently different benchmark. Classes must be disjoint across splits: the Ravi split
    guarantees it and VL-ICL's matching task relies on it.
    """
    root = Path(root)
    pickles = _ignored_pickles(root)
    images_dir = root / IMAGES_DIRNAME
    missing_csvs = [
        csv_path(root, split) for split in SPLITS if not csv_path(root, split).is_file()
    ]
    if missing_csvs:
        hint = " (only pickled caches were found, which benchsmith never opens)" if pickles else ""
        raise SourceError(
            f"MiniImageNet CSV not found: {missing_csvs[0].name}{hint}",
            path=missing_csvs[0],
            fix=_LAYOUT_FIX,
        )
    if not images_dir.is_dir():
        raise SourceError("MiniImageNet images/ folder not found", path=images_dir, fix=_LAYOUT_FIX)
    rows = {split: _read_csv(csv_path(root, split)) for split in SPLITS}
    _check_disjoint_classes(root, rows)
    layout = _detect_layout(images_dir, rows)
    splits = {
        split: [
            MiniImage(filename, label, split, _image_path(images_dir, layout, filename, label))
            for _, filename, label in rows[split]
        ]
        for split in SPLITS
    }
    if check_files:
        _check_files_exist(root, images_dir, layout, rows)
    mini = MiniImageNet(
        root=root,
        splits=splits,
        layout=layout,
        csv_sha256={split: sha256_file(csv_path(root, split)) for split in SPLITS},
        ignored_pickles=pickles,
    )
    _check_counts(mini, expect_classes, expect_images_per_class)
    return mini


def require_images_per_class(mini: MiniImageNet, split: str, minimum: int, *, why: str) -> None:
    """Raise naming the CSV when a class of ``split`` has fewer than ``minimum`` images.

    Builders call this before sampling episodes (e.g. 5 support + 1 query images per class),
    so a thin class is reported as a source problem, not as a sampling crash.
    """
    for label, images in mini.classes(split).items():
        if len(images) < minimum:
            raise SourceError(
                f"class {label} in {split}.csv has {len(images)} images; {why} needs at least "
                f"{minimum}",
                path=mini.csv_path(split),
                fix="use a complete MiniImageNet copy (600 images per class) or lower the "
                "number of shots / episodes in params.yaml",
            )


def _ignored_pickles(root: Path) -> list[Path]:
    """Top-level ``*.pkl``/``*.pickle`` files: listed and logged, never opened."""
    if not root.is_dir():
        raise SourceError("MiniImageNet folder not found", path=root, fix=_LAYOUT_FIX)
    found = sorted(
        path for path in root.iterdir() if path.suffix.lower() in PICKLE_SUFFIXES and path.is_file()
    )
    if found:
        names = ", ".join(path.name for path in found)
        log(
            f"MiniImageNet: ignoring pickled caches (never opened, CSVs + images are read): {names}"
        )
    return found


def _read_csv(path: Path) -> list[tuple[int, str, str]]:
    """(line number, filename, label) per row; any malformed line is an error naming it."""
    fix = (
        f"repair {path.name}: it must be `filename,label` rows like n0153282900000005.jpg,n01532829"
    )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path.name} is not UTF-8 text ({exc})", path=path, fix=fix) from exc
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(cell.strip() for cell in header) != CSV_HEADER:
        raise SourceError(
            f"{path.name} has header {header!r}, expected {','.join(CSV_HEADER)!r}",
            path=path,
            fix=fix,
        )
    rows: list[tuple[int, str, str]] = []
    seen: dict[str, int] = {}
    for cells in reader:
        line = reader.line_num
        if not cells or all(not cell.strip() for cell in cells):
            continue  # blank lines (e.g. a trailing newline)
        if len(cells) != 2:
            raise SourceError(
                f"{path.name} line {line}: expected 2 fields, got {len(cells)}: {cells!r:.120}",
                path=path,
                fix=fix,
            )
        filename, label = (cell.strip() for cell in cells)
        problem = _name_problem(filename) or _name_problem(label)
        if problem:
            raise SourceError(
                f"{path.name} line {line}: {problem} in {cells!r:.120}", path=path, fix=fix
            )
        if filename in seen:
            raise SourceError(
                f"{path.name} line {line}: {filename} already listed on line {seen[filename]}",
                path=path,
                fix=fix,
            )
        seen[filename] = line
        rows.append((line, filename, label))
    return rows


def _name_problem(name: str) -> str | None:
    """Names become path components, so they must be plain file names (no traversal)."""
    if not name:
        return "empty field"
    if "/" in name or "\\" in name or name in (".", "..") or PurePosixPath(name).name != name:
        return f"{name!r} is not a plain file name"
    return None


def _check_disjoint_classes(root: Path, rows: dict[str, list[tuple[int, str, str]]]) -> None:
    first_split: dict[str, str] = {}
    for split in SPLITS:
        for line, _, label in rows[split]:
            other = first_split.setdefault(label, split)
            if other != split:
                raise SourceError(
                    f"class {label} appears in both {other}.csv and {split}.csv (line {line}); "
                    "the Ravi-Larochelle split has disjoint classes",
                    path=csv_path(root, split),
                    fix="use the original Ravi-Larochelle CSVs (64/16/20 disjoint classes); a "
                    "copy re-split by image instead of by class cannot be used",
                )


def _detect_layout(images_dir: Path, rows: dict[str, list[tuple[int, str, str]]]) -> str:
    """``per_class`` when ``images/<label>/`` folders exist for the first row, else ``flat``."""
    for split in SPLITS:
        if rows[split]:
            _, filename, label = rows[split][0]
            if (images_dir / label).is_dir() and not (images_dir / filename).is_file():
                return "per_class"
            return "flat"
    return "flat"


def _image_path(images_dir: Path, layout: str, filename: str, label: str) -> Path:
    return images_dir / filename if layout == "flat" else images_dir / label / filename


def _check_files_exist(
    root: Path, images_dir: Path, layout: str, rows: dict[str, list[tuple[int, str, str]]]
) -> None:
    """One directory listing per folder instead of 60,000 stat calls."""
    listings: dict[Path, set[str]] = {}

    def names_in(folder: Path) -> set[str]:
        if folder not in listings:
            try:
                listings[folder] = {entry.name for entry in os.scandir(folder) if entry.is_file()}
            except (FileNotFoundError, NotADirectoryError):
                listings[folder] = set()
        return listings[folder]

    for split in SPLITS:
        for line, filename, label in rows[split]:
            folder = images_dir if layout == "flat" else images_dir / label
            if filename not in names_in(folder):
                raise SourceError(
                    f"{split}.csv line {line} names {filename} ({label}), but "
                    f"{(folder / filename).relative_to(root)} does not exist ({layout} layout)",
                    path=csv_path(root, split),
                    fix="restore the missing image from your MiniImageNet copy, or use CSVs "
                    "that match the images/ folder",
                )


def _check_counts(
    mini: MiniImageNet, expect_classes: dict[str, int] | None, expect_images: int | None
) -> None:
    for split in SPLITS:
        classes = mini.classes(split)
        wanted = (expect_classes or {}).get(split)
        if wanted is not None and len(classes) != wanted:
            raise SourceError(
                f"{split}.csv lists {len(classes)} classes, expected {wanted}",
                path=mini.csv_path(split),
                fix="use the complete Ravi-Larochelle split (train 64 / val 16 / test 20 classes),"
                " or pass --no-counts (`benchsmith source check miniimagenet DIR --no-counts`)"
                " for a deliberately smaller copy",
            )
        if expect_images is None:
            continue
        for label, images in classes.items():
            if len(images) != expect_images:
                raise SourceError(
                    f"class {label} in {split}.csv has {len(images)} images, expected "
                    f"{expect_images}",
                    path=mini.csv_path(split),
                    fix=f"use a complete copy ({RAVI_IMAGES_PER_CLASS} images per class), or "
                    "pass --no-counts for a deliberately smaller copy",
                )
