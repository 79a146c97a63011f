"""Read any dataset in Hugging Face parquet layout as a stream of uniform samples.

The curation stages and ``benchsmith predict`` are benchmark-agnostic: they need a sample id, a
question, a gold answer, optional choices and the images, whatever the columns are called. This
module finds the parquet files of one config and split (our ``data/<config>/<split>-*.parquet``
layout, or the ``configs:`` block of any Hub dataset's README), maps the columns (given, or
guessed from common names) and yields :class:`SampleView` objects in a stable order.

Images can live in the row (an ``Image`` or ``List(Image)`` column, bytes or a path relative to
the dataset) or in another config joined by key, as MMNeedle's haystacks are
(:class:`ImageJoin`). Reading is batched with pyarrow, so memory stays at one batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import canonical_json, sha256_bytes
from benchsmith.hf.reader import split_files

ID_NAMES = ("sample_id", "id", "question_id", "questionId", "uid", "index")
QUESTION_NAMES = ("question", "prompt", "query", "text")
ANSWER_NAMES = ("answer", "gold_answer", "answers", "label")
CHOICE_NAMES = ("choices", "options")
IMAGE_NAMES = ("images", "image", "image_list")
SUBTASK_NAMES = ("subtask", "task", "category")


@dataclass(frozen=True)
class ImageJoin:
    """Images stored in another config: ``column`` holds keys into ``config``'s ``key`` column.

    ``config`` may use ``{field}`` placeholders filled from the row (``haystacks_n{grid}``).
    """

    column: str
    config: str
    key: str
    image: str = "image"
    split: str = "test"


@dataclass(frozen=True)
class ColumnMap:
    """Which column plays which role; ``None`` means guess from common names."""

    id: str | None = None
    question: str | None = None
    answer: str | None = None
    choices: str | None = None
    image: str | None = None
    subtask: str | None = None
    image_join: ImageJoin | None = None


@dataclass
class SampleView:
    sample_id: str
    question: str
    answer: Any
    choices: list[str] | None
    subtask: str
    images: list[bytes] = field(default_factory=list)
    row_sha256: str = ""  # digest of the row (image bytes replaced by their sha256)
    row: dict[str, Any] = field(default_factory=dict)  # the row without image payloads


def _guess(
    names: list[str], given: str | None, candidates: tuple[str, ...], role: str
) -> str | None:
    if given is not None:
        if given not in names:
            raise SourceError(
                f"--{role}-column {given!r} is not a column; columns: {', '.join(names)}",
                fix=f"pass --{role}-column with one of the listed columns",
            )
        return given
    return next((c for c in candidates if c in names), None)


def resolve_columns(names: list[str], columns: ColumnMap) -> ColumnMap:
    """Fill the roles left ``None`` from common column names; id and question are required."""
    resolved = ColumnMap(
        id=_guess(names, columns.id, ID_NAMES, "id"),
        question=_guess(names, columns.question, QUESTION_NAMES, "question"),
        answer=_guess(names, columns.answer, ANSWER_NAMES, "answer"),
        choices=_guess(names, columns.choices, CHOICE_NAMES, "choices"),
        image=_guess(names, columns.image, IMAGE_NAMES, "image")
        if columns.image_join is None
        else None,
        subtask=_guess(names, columns.subtask, SUBTASK_NAMES, "subtask"),
        image_join=columns.image_join,
    )
    for role in ("id", "question"):
        if getattr(resolved, role) is None:
            raise SourceError(
                f"cannot tell which column is the {role}; columns: {', '.join(names)}",
                fix=f"pass --{role}-column",
            )
    return resolved


def _image_payloads(value: Any, dataset_dir: Path) -> list[bytes]:
    """Bytes of an Image / List(Image) / path value; paths resolve against the dataset folder."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            if item.get("bytes") is not None:
                out.append(bytes(item["bytes"]))
                continue
            item = item.get("path")
        if isinstance(item, bytes | bytearray):
            out.append(bytes(item))
        elif isinstance(item, str):
            path = Path(item) if Path(item).is_absolute() else dataset_dir / item
            if not path.is_file():
                raise SourceError("image file named by the dataset is missing", path=path)
            out.append(path.read_bytes())
    return out


def _strip_payloads(value: Any) -> Any:
    """Replace image bytes by their sha256, so a row can be hashed and logged cheaply."""
    if isinstance(value, dict):
        return {k: _strip_payloads(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_payloads(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return {"sha256": sha256_bytes(bytes(value))}
    return value


def row_digest(row: dict[str, Any]) -> str:
    """sha256 of a row with image bytes replaced by their sha256 (stable across re-encodes of
    the parquet file, changes when any value or image changes)."""
    stripped = {k: _strip_payloads(v) for k, v in row.items()}
    return sha256_bytes(canonical_json(stripped).encode())


class DatasetView:
    """One config and split of a parquet dataset, read as :class:`SampleView` objects."""

    def __init__(
        self,
        dataset_dir: str | Path,
        config: str,
        split: str,
        columns: ColumnMap | None = None,
        batch_size: int = 64,
    ):
        self.dataset_dir = Path(dataset_dir)
        self.config = config
        self.split = split
        self.files = split_files(self.dataset_dir, config, split)
        self.batch_size = batch_size
        schema = pq.read_schema(self.files[0])
        self.column_names = list(schema.names)
        self.columns = resolve_columns(self.column_names, columns or ColumnMap())

    def __len__(self) -> int:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in self.files)

    def _dataset(self) -> pads.Dataset:
        return pads.dataset([str(p) for p in self.files], format="parquet")

    def sample_ids(self) -> list[str]:
        table = self._dataset().to_table(columns=[self.columns.id])
        return [str(v) for v in table.column(0).to_pylist()]

    def _joined_images(self, rows: list[dict[str, Any]]) -> dict[tuple[str, Any], bytes]:
        """Images the rows of one batch point to, read with a key filter: memory holds one
        batch's images, never a whole joined config (MMNeedle's ``haystacks_n8`` is GBs)."""
        join = self.columns.image_join
        assert join is not None
        wanted: dict[str, set[Any]] = {}
        for row in rows:
            wanted.setdefault(join.config.format(**row), set()).update(row[join.column])
        found: dict[tuple[str, Any], bytes] = {}
        for config, keys in sorted(wanted.items()):
            table = pads.dataset(
                [str(p) for p in split_files(self.dataset_dir, config, join.split)],
                format="parquet",
            ).to_table(columns=[join.key, join.image], filter=pads.field(join.key).isin(list(keys)))
            for key, value in zip(
                table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True
            ):
                found[(config, key)] = _image_payloads(value, self.dataset_dir)[0]
        return found

    def _row_images(self, row: dict[str, Any], joined: dict[tuple[str, Any], bytes]) -> list[bytes]:
        c = self.columns
        if c.image_join is None:
            return _image_payloads(row.get(c.image), self.dataset_dir) if c.image else []
        config = c.image_join.config.format(**row)
        missing = [k for k in row[c.image_join.column] if (config, k) not in joined]
        if missing:
            raise SourceError(
                f"sample {row.get(c.id)} names images missing from {config}: {missing[:3]}",
                path=self.dataset_dir / "data" / config,
            )
        return [joined[(config, k)] for k in row[c.image_join.column]]

    def _view(self, row: dict[str, Any], images: list[bytes], with_images: bool) -> SampleView:
        c = self.columns
        choices = row.get(c.choices) if c.choices else None
        return SampleView(
            sample_id=str(row[c.id]),
            question=str(row[c.question] or ""),
            answer=row.get(c.answer) if c.answer else None,
            # options may be {label, text} structs (MULTI); an empty list means no options
            choices=[
                str(x["text"]) if isinstance(x, dict) and "text" in x else str(x) for x in choices
            ]
            if choices
            else None,  # fmt: skip
            subtask=str(row[c.subtask]) if c.subtask and row.get(c.subtask) else self.config,
            images=images,
            # only a full row has the digest the curated provenance and audit use
            row_sha256=row_digest(row) if with_images or c.image is None else "",
            row={k: _strip_payloads(v) for k, v in row.items()},
        )

    def iter_samples(
        self, *, with_images: bool = True, only: set[str] | None = None
    ) -> Iterator[SampleView]:
        """Samples in file order (files sorted by name), one pyarrow batch in memory at a time;
        ``only`` restricts to these sample ids (their images alone are read)."""
        columns = None
        if not with_images and self.columns.image is not None:
            columns = [n for n in self.column_names if n != self.columns.image]
        batch_size = self.batch_size if self.columns.image_join is None else 8
        for batch in self._dataset().to_batches(columns=columns, batch_size=batch_size):
            rows = batch.to_pylist()
            if only is not None:
                rows = [r for r in rows if str(r[self.columns.id]) in only]
            joined = {}
            if with_images and self.columns.image_join is not None and rows:
                joined = self._joined_images(rows)
            for row in rows:
                images = self._row_images(row, joined) if with_images else []
                yield self._view(row, images, with_images)

    def raw_batches(self) -> Iterator[Any]:
        """pyarrow record batches of the full rows, for writers that copy rows unchanged."""
        yield from self._dataset().to_batches(batch_size=self.batch_size)


def merge_columns(preset: ColumnMap, given: ColumnMap) -> ColumnMap:
    """User-given roles win over the family preset."""
    updates = {k: v for k, v in given.__dict__.items() if v is not None}
    return replace(preset, **updates)
