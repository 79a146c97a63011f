"""Convert a Hugging Face parquet copy of MiniImageNet into the Ravi-Larochelle layout.

Some users have MiniImageNet only as a Hugging Face dataset repo. Rather than teach every
builder a second format, this writes the same ``images/`` + ``{train,val,test}.csv`` folder the
reader already checks. Supported input (anything else is an error naming the file):

* files: ``*.parquet`` given as a list, or found recursively under a folder (hidden folders
  such as ``.cache`` skipped), processed in sorted path order, rows in file order;
* ``image``: the ``datasets`` Image struct ``{bytes, path}`` (or plain binary); bytes required;
* ``label``: a string wnid, or an integer with ``ClassLabel`` names read from the parquet's
  ``huggingface`` schema metadata (``info.features.label.names``);
* split: a ``split`` column if present, else the file name prefix (``train-00000-of-00001``,
  ``validation-*``, ``val-*``, ``test-*``), else the parent folder name (``default/train/0000``);
  ``validation``/``valid``/``val`` map to ``val``.

Image files are named Ravi-style ``<wnid><8-digit idx>.jpg``: an image whose ``path`` already
has that form for its label keeps it (the original ImageNet index is provenance); others are
numbered per class from 10000000 up, so they can never clash with an original index. JPEG
bytes are written unchanged; other formats are decoded and re-encoded as JPEG (counted in
``benchsmith_conversion.json``). The output folder appears atomically, only when complete.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, UnidentifiedImageError

from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log, progress
from benchsmith.sources.miniimagenet.reader import (
    CSV_HEADER,
    IMAGES_DIRNAME,
    SPLITS,
    read_miniimagenet,
)

SPLIT_ALIASES = {
    "train": "train",
    "training": "train",
    "validation": "val",
    "valid": "val",
    "val": "val",
    "test": "test",
}
CONVERSION_RECORD = "benchsmith_conversion.json"
RENUMBER_START = 10_000_000
REENCODE_QUALITY = 95
_RAVI_NAME = re.compile(r"(n\d{8})(\d{8})\.jpe?g", re.IGNORECASE)
_WNID = re.compile(r"n\d{8}")
_JPEG_MAGIC = b"\xff\xd8\xff"
_FIX = (
    "convert a parquet copy with an `image` column (Image feature), a `label` column (wnid "
    "string or ClassLabel int) and the split in the file name (train-*/validation-*/test-*) "
    "or a `split` column"
)


@dataclass
class _Conversion:
    """Running state of one conversion (rows per split, names in use, counters)."""

    rows: dict[str, list[tuple[str, str]]] = field(
        default_factory=lambda: {split: [] for split in SPLITS}
    )
    used_names: dict[str, Path] = field(default_factory=dict)  # file name -> parquet it came from
    label_home: dict[str, tuple[str, Path]] = field(default_factory=dict)  # label -> split, file
    renumbered: Counter = field(default_factory=Counter)  # label -> images renumbered so far
    reencoded: int = 0
    non_wnid_labels: set[str] = field(default_factory=set)


def miniimagenet_from_hf_parquet(
    parquet_files_or_dir: str | Path | list, out_root: str | Path
) -> Path:
    """Write ``out_root/images/*.jpg`` and ``out_root/{train,val,test}.csv``; returns ``out_root``."""
    files = _parquet_files(parquet_files_or_dir)
    out_root = Path(out_root)
    state = _Conversion()
    with atomic_directory(out_root, inputs=files) as staging:
        images_dir = staging / IMAGES_DIRNAME
        images_dir.mkdir()
        for path in files:
            _convert_file(path, images_dir, state)
        if not any(state.rows.values()):
            raise SourceError("the parquet files hold no rows", path=files[0], fix=_FIX)
        for split in SPLITS:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(CSV_HEADER)
            writer.writerows(state.rows[split])
            (staging / f"{split}.csv").write_text(buffer.getvalue(), encoding="utf-8")
        record = {
            "source_files": [{"file": str(path), "sha256": sha256_file(path)} for path in files],
            "images": {split: len(state.rows[split]) for split in SPLITS},
            "renumbered": sum(state.renumbered.values()),
            "reencoded_to_jpeg": state.reencoded,
        }
        (staging / CONVERSION_RECORD).write_text(
            json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        read_miniimagenet(staging)  # the reader's checks, before the folder becomes visible
    counts = ", ".join(f"{split} {len(state.rows[split])}" for split in SPLITS)
    log(f"MiniImageNet parquet converted into {out_root}: {counts} images")
    if state.non_wnid_labels:
        examples = ", ".join(sorted(state.non_wnid_labels)[:3])
        log(f"warning: labels are not ImageNet wnids (e.g. {examples}); kept as they are")
    return out_root


def _parquet_files(source: str | Path | list) -> list[Path]:
    if isinstance(source, (str, Path)):
        source = Path(source)
        if source.is_dir():
            files = sorted(
                path
                for path in source.rglob("*.parquet")
                if not any(part.startswith(".") for part in path.relative_to(source).parts)
            )
            if not files:
                raise SourceError("no *.parquet files in this folder", path=source, fix=_FIX)
            return files
        candidates = [source]
    else:
        candidates = [Path(item) for item in source]
    if not candidates:
        raise SourceError("no parquet files given", fix=_FIX)
    for path in candidates:
        if not path.is_file():
            raise SourceError("parquet file not found", path=path, fix=_FIX)
    return sorted(candidates)


def split_from_path(path: Path) -> str | None:
    """``train-00000-of-00001.parquet`` -> train; ``default/validation/0000.parquet`` -> val."""
    token = re.split(r"[-_.]", path.stem, maxsplit=1)[0].lower()
    if token in SPLIT_ALIASES:
        return SPLIT_ALIASES[token]
    return SPLIT_ALIASES.get(path.parent.name.lower())


def label_names(schema: pa.Schema) -> list[str] | None:
    """ClassLabel names of ``label`` from the ``huggingface`` schema metadata, if any."""
    raw = (schema.metadata or {}).get(b"huggingface")
    if not raw:
        return None
    try:
        features = json.loads(raw)["info"]["features"]
    except (ValueError, KeyError, TypeError):
        return None
    label = features.get("label") if isinstance(features, dict) else None
    names = label.get("names") if isinstance(label, dict) else None
    return [str(name) for name in names] if isinstance(names, list) else None


def _convert_file(path: Path, images_dir: Path, state: _Conversion) -> None:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise SourceError(f"not a readable parquet file ({exc})", path=path, fix=_FIX) from exc
    schema = parquet.schema_arrow
    missing = [column for column in ("image", "label") if column not in schema.names]
    if missing:
        raise SourceError(
            f"parquet file lacks column(s) {missing}; has {schema.names}", path=path, fix=_FIX
        )
    has_split_column = "split" in schema.names
    file_split = None if has_split_column else split_from_path(path)
    if not has_split_column and file_split is None:
        raise SourceError(
            "cannot tell the split: no `split` column and the file name does not start with "
            "train/validation/val/test",
            path=path,
            fix=_FIX,
        )
    names = label_names(schema)
    columns = ["image", "label"] + (["split"] if has_split_column else [])
    row_number = 0
    batches = parquet.iter_batches(batch_size=64, columns=columns)
    for batch in progress(batches, desc=f"convert {path.name}", unit="batch"):
        for row in batch.to_pylist():
            split = file_split or _split_value(row.get("split"), path, row_number)
            label = _label_value(row["label"], names, path, row_number)
            _write_image(row["image"], label, split, path, row_number, images_dir, state)
            row_number += 1


def _split_value(value: Any, path: Path, row: int) -> str:
    split = SPLIT_ALIASES.get(str(value).strip().lower()) if value is not None else None
    if split is None:
        raise SourceError(
            f"row {row}: split {value!r} is not one of {sorted(SPLIT_ALIASES)}", path=path, fix=_FIX
        )
    return split


def _label_value(value: Any, names: list[str] | None, path: Path, row: int) -> str:
    if isinstance(value, str):
        label = value.strip()
    elif isinstance(value, int) and not isinstance(value, bool):
        if names is None:
            raise SourceError(
                f"row {row}: integer label {value} but no ClassLabel names in the parquet's "
                "huggingface metadata",
                path=path,
                fix="export with `datasets` (which stores the ClassLabel names) or use wnid strings",
            )
        if not 0 <= value < len(names):
            raise SourceError(
                f"row {row}: label {value} outside the {len(names)} ClassLabel names",
                path=path,
                fix=_FIX,
            )
        label = names[value]
    else:
        raise SourceError(f"row {row}: label {value!r} is neither str nor int", path=path, fix=_FIX)
    if not label or "/" in label or "\\" in label or label in (".", ".."):
        raise SourceError(
            f"row {row}: label {label!r} is not a usable class name", path=path, fix=_FIX
        )
    return label


def _write_image(
    image: Any,
    label: str,
    split: str,
    path: Path,
    row: int,
    images_dir: Path,
    state: _Conversion,
) -> None:
    home = state.label_home.setdefault(label, (split, path))
    if home[0] != split:
        raise SourceError(
            f"row {row}: class {label} is in split {split} here but in {home[0]} in {home[1]}; "
            "the Ravi-Larochelle split has disjoint classes",
            path=path,
            fix="use a copy of the Ravi-Larochelle split (64/16/20 disjoint classes); a copy "
            "re-split by image instead of by class cannot be used",
        )
    if not _WNID.fullmatch(label):
        state.non_wnid_labels.add(label)
    data, source_name = _image_bytes(image, path, row)
    name = _ravi_name(source_name, label)
    if name is None:
        name = f"{label}{RENUMBER_START + state.renumbered[label]:08d}.jpg"
        state.renumbered[label] += 1
    if name in state.used_names:
        raise SourceError(
            f"row {row}: image {name} appears twice (also in {state.used_names[name].name})",
            path=path,
            fix="remove the duplicate rows from the parquet copy",
        )
    state.used_names[name] = path
    if not data.startswith(_JPEG_MAGIC):
        data = _reencode_jpeg(data, path, row)
        state.reencoded += 1
    (images_dir / name).write_bytes(data)
    state.rows[split].append((name, label))


def _image_bytes(image: Any, path: Path, row: int) -> tuple[bytes, str | None]:
    if isinstance(image, dict):
        data, source_path = image.get("bytes"), image.get("path")
    else:
        data, source_path = image, None
    if not isinstance(data, bytes) or not data:
        raise SourceError(
            f"row {row}: the image has no embedded bytes (path {source_path!r})",
            path=path,
            fix="export the dataset with images embedded (datasets `embed_external_files`)",
        )
    name = PurePosixPath(str(source_path).replace("\\", "/")).name if source_path else None
    return data, name


def _ravi_name(source_name: str | None, label: str) -> str | None:
    match = _RAVI_NAME.fullmatch(source_name or "")
    if match and match[1] == label:
        return f"{label}{match[2]}.jpg"
    return None


def _reencode_jpeg(data: bytes, path: Path, row: int) -> bytes:
    try:
        with Image.open(io.BytesIO(data)) as decoded:
            rgb = decoded.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise SourceError(
            f"row {row}: image bytes do not decode ({exc})", path=path, fix=_FIX
        ) from exc
    buffer = io.BytesIO()
    rgb.save(buffer, "JPEG", quality=REENCODE_QUALITY)
    return buffer.getvalue()
