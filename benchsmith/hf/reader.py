"""Read a dataset folder in Hugging Face parquet layout without going through ``datasets``.

A published folder is the input of everything that comes after publishing (the audit, the
scorers, curation, ``predict``), and any Hub dataset downloaded locally is read the same way.
This is the one reader of such folders:

- :func:`split_files` finds the parquet files of one config and split, from the README's
  ``configs:`` block when there is one (HF's rules), else ``data/<config>/<split>-*.parquet``;
- :func:`read_build_info` reads a benchsmith folder's ``build_info.json``;
- :func:`read_rows` fetches rows by key (pyarrow filters read only the row groups that can
  hold them), :func:`iter_row_batches` streams a split a batch at a time (memory stays at one
  batch), and :func:`read_columns` reads a few columns of a split (the scorers' gold).

It imports pyarrow only (no ``datasets``, no PIL), so scoring stays light.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import yaml

from benchsmith.core.errors import SourceError

BUILD_INFO = "build_info.json"


def read_build_info(dataset_dir: str | Path) -> dict[str, Any]:
    """``build_info.json`` of a benchsmith dataset folder (an error names the folder if absent)."""
    path = Path(dataset_dir) / BUILD_INFO
    if not Path(dataset_dir).is_dir():
        raise SourceError(
            "dataset folder not found",
            path=dataset_dir,
            fix="check the path (a folder written by `benchsmith publish` or `benchsmith curate`)",
        )
    if not path.is_file():
        raise SourceError(
            f"not a benchsmith dataset folder (no {BUILD_INFO})",
            path=dataset_dir,
            fix="point at a folder written by `benchsmith publish` or `benchsmith curate`",
        )
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(
            f"{BUILD_INFO} is not valid JSON ({exc})", path=path, fix="publish the dataset again"
        ) from exc
    if not isinstance(info, dict):
        raise SourceError(f"{BUILD_INFO} is not a JSON object", path=path, fix="publish again")
    return info


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


def readme_metadata(dataset_dir: str | Path) -> dict[str, Any]:
    """The README's YAML front matter ({} when there is no README or no front matter).

    Parsed once per README version (path, size, mtime): a whole-dataset audit asks for the
    files of every config, and MMNeedle's front matter lists 25 configs."""
    readme = Path(dataset_dir) / "README.md"
    try:
        stat = readme.stat()
    except OSError:
        return {}
    if not readme.is_file():
        return {}
    return _parse_front_matter(str(readme.resolve()), stat.st_size, stat.st_mtime_ns)


def readme_configs(dataset_dir: str | Path) -> list[dict[str, Any]] | None:
    """The ``configs:`` entries of the README front matter (None: no README or no block)."""
    configs = readme_metadata(dataset_dir).get("configs")
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else None


@functools.lru_cache(maxsize=32)
def _parse_front_matter(path: str, size: int, mtime_ns: int) -> dict[str, Any]:
    text = Path(path).read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        meta = yaml.load(text.split("---", 2)[1], Loader=_YAML_LOADER) or {}
    except yaml.YAMLError as exc:
        raise SourceError(f"README front matter is not valid YAML: {exc}", path=path) from exc
    return meta if isinstance(meta, dict) else {}


def _readme_data_files(dataset_dir: Path, config: str, split: str) -> list[str] | None:
    """Glob patterns of one config and split per the README (HF rules: a string or a list of
    strings is the ``train`` split; else a list of ``{split, path}`` with one or more paths)."""
    for entry in readme_configs(dataset_dir) or []:
        if entry.get("config_name") != config:
            continue
        data_files = entry.get("data_files")
        if isinstance(data_files, str):
            data_files = [data_files]
        if not isinstance(data_files, list):
            return []  # not a form the Hub accepts: no files, so the error lists the configs
        if all(isinstance(item, str) for item in data_files):
            return list(data_files) if split == "train" else []
        for item in data_files:
            if isinstance(item, dict) and item.get("split") == split:
                paths = item.get("path")
                return [paths] if isinstance(paths, str) else list(paths or [])
        return []
    return None


def available_configs(dataset_dir: str | Path) -> list[str]:
    """Config names a dataset folder offers: its README ``configs:`` plus the ``data/`` layout
    (``data/<config>/`` folders, and ``default`` for ``data/<split>-*.parquet``)."""
    root = Path(dataset_dir)
    names = {str(c["config_name"]) for c in readme_configs(root) or [] if "config_name" in c}
    names.update(p.name for p in (root / "data").glob("*") if p.is_dir())
    if any(p.is_file() for p in (root / "data").glob("*.parquet")):
        names.add("default")
    return sorted(names)


def split_files(dataset_dir: str | Path, config: str, split: str) -> list[Path]:
    """The parquet files of one config and split, sorted; a clear error lists what exists."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise SourceError("dataset folder not found", path=root, fix="check the DATASET_DIR path")
    patterns = _readme_data_files(root, config, split)
    if patterns is None:
        patterns = [f"data/{config}/{split}-*.parquet"]
        if config == "default":
            patterns.append(f"data/{split}-*.parquet")
    files: set[Path] = set()
    for pattern in patterns:
        files.update(p for p in root.glob(pattern) if p.is_file())
    if not files:
        configs = available_configs(root)
        splits = available_splits(root, config) if config in configs else []
        if splits:
            raise SourceError(
                f"config {config!r} has no split {split!r}; its splits: {', '.join(splits)}",
                path=root,
                fix="pass --split with one of its splits",
            )
        raise SourceError(
            f"no parquet files for config {config!r}, split {split!r}; "
            f"configs: {', '.join(configs) or '(none found)'}",
            path=root,
            fix="pass --config with one of the configs",
        )
    return sorted(files)


def available_splits(dataset_dir: str | Path, config: str) -> list[str]:
    """Split names of one config with files: its README ``data_files`` entries, else the
    ``data/<config>/<split>-*.parquet`` layout."""
    root = Path(dataset_dir)
    for entry in readme_configs(root) or []:
        if entry.get("config_name") != config:
            continue
        data_files = entry.get("data_files")
        if isinstance(data_files, str) or (
            isinstance(data_files, list) and all(isinstance(i, str) for i in data_files)
        ):
            return ["train"]  # the Hub's rule for bare paths
        if isinstance(data_files, list):
            return sorted(
                {str(i["split"]) for i in data_files if isinstance(i, dict) and "split" in i}
            )
    pattern = "data/*.parquet" if config == "default" else f"data/{config}/*.parquet"
    return sorted({p.name.split("-", 1)[0] for p in root.glob(pattern) if "-" in p.name})


def _dataset(files: Sequence[Path]) -> pads.Dataset:
    return pads.dataset([str(p) for p in files], format="parquet")


def read_rows(
    dataset_dir: str | Path, config: str, column: str, values: list[Any], split: str = "test"
) -> dict[Any, dict[str, Any]]:
    """Rows of ``config`` whose ``column`` is in ``values``, keyed by that column."""
    files = split_files(dataset_dir, config, split)
    if not values:
        return {}
    try:
        table = _dataset(files).to_table(filter=pads.field(column).isin(values))
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(files, exc) from exc
    return {row[column]: row for row in table.to_pylist()}


def read_columns(
    dataset_dir: str | Path, config: str, split: str, columns: Sequence[str]
) -> pa.Table:
    """The given columns of one split (all shards, in file order)."""
    files = split_files(dataset_dir, config, split)
    try:
        return _dataset(files).to_table(columns=list(columns))
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(files, exc, columns) from exc


def iter_row_batches(
    dataset_dir: str | Path,
    config: str,
    split: str,
    *,
    columns: Sequence[str] | None = None,
    batch_size: int = 64,
) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    """``(shard file, rows)`` batches of one split, shard by shard, one batch in memory."""
    for file in split_files(dataset_dir, config, split):
        try:
            # pre_buffer=False: pyarrow would otherwise keep every row group read so far alive
            parquet = pq.ParquetFile(file, pre_buffer=False)
            for batch in parquet.iter_batches(batch_size=batch_size, columns=columns):
                yield file, batch.to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise _unreadable([file], exc) from exc


def _unreadable(
    files: Sequence[Path], exc: Exception, columns: Sequence[str] | None = None
) -> SourceError:
    where = files[0] if len(files) == 1 else files[0].parent
    needs = f"; the reader needs the columns {', '.join(columns)}" if columns else ""
    return SourceError(
        f"cannot read the parquet data ({type(exc).__name__}: {exc}){needs}",
        path=where,
        fix="the shard is damaged or not from this dataset: publish the dataset again",
    )
