"""The images of published rows, rendered here or on an executor: publish's encoding step.

Why: publishing MMIU renders every embedded image from its source (PNG encoding of COCO pieces
and transforms, depth maps and marked frames; colour frames read from their stream) and checks
each against the sha256 the plan recorded. That is the CPU-heavy part of a publish, and rows are
independent: each row is one task. The executor returns the rows' images in row order, so the
parquet is the same bytes whichever executor and however many workers rendered it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.images import (
    ImageSources,
    checked_render,
    is_scannet,
    ref_extension,
)
from benchsmith.core.executor import Executor, ExecutorConfig, open_executor
from benchsmith.hf.image_names import neutral_image_name

ROWS_PER_TASK = 4  # a row renders 2-9 images: a few rows per task keep the overhead small


def row_images(
    refs: Iterable[dict[str, Any]], sources: ImageSources, embed_scannet: bool
) -> list[dict[str, Any] | None]:
    """One row's ``images`` column: each image rendered and checked, or None for a ScanNet
    image published as a reference only."""
    images: list[dict[str, Any] | None] = []
    for ref in refs:
        if is_scannet(ref) and not embed_scannet:
            images.append(None)
            continue
        data = checked_render(ref, sources)
        images.append({"bytes": data, "path": neutral_image_name(data, ref_extension(ref))})
    return images


@dataclass(frozen=True)
class SourceRoots:
    """Where a worker opens the sources (the same paths on every node: a shared filesystem)."""

    scannet: str | None
    coco_images: str | None
    release: str | None

    @classmethod
    def of(cls, sources: ImageSources) -> SourceRoots:
        def text(path: Path | None) -> str | None:
            return str(path) if path is not None else None

        return cls(text(sources.scannet), text(sources.coco_images), text(sources.release))

    def open(self) -> ImageSources:
        def path(text: str | None) -> Path | None:
            return Path(text) if text is not None else None

        return ImageSources(path(self.scannet), path(self.coco_images), path(self.release))


@dataclass(frozen=True)
class RowImagesJob:
    roots: SourceRoots
    refs: tuple[dict[str, Any], ...]
    embed_scannet: bool


_OPEN: dict[SourceRoots, ImageSources] = {}  # per worker process: streams stay open across tasks


def render_row_images(job: RowImagesJob) -> list[dict[str, Any] | None]:
    """Worker task (module level, so workers and Ray import it by name)."""
    sources = _OPEN.get(job.roots)
    if sources is None:
        sources = _OPEN[job.roots] = job.roots.open()
    return row_images(job.refs, sources, job.embed_scannet)


class RowImageRenderer:
    """Pairs rows with their rendered images: in this process (no executor, or one local
    worker) or on the executor, at most ``2 x workers`` tasks ahead. Use with ``with``."""

    def __init__(self, config: ExecutorConfig | None = None):
        self.config = config
        self._executor: Executor | None = None
        self._stack = ExitStack()

    def __enter__(self) -> RowImageRenderer:
        if self.config is not None and not self.config.in_process:
            self._executor = self._stack.enter_context(open_executor(self.config, [__name__]))
        return self

    def __exit__(self, *exc: Any) -> None:
        self._executor = None
        self._stack.__exit__(*exc)

    def rendered(
        self, rows: Iterable[dict[str, Any]], sources: ImageSources, embed_scannet: bool
    ) -> Iterator[tuple[dict[str, Any], list[dict[str, Any] | None]]]:
        """``(row, its images)`` in row order."""
        if self._executor is None:
            for row in rows:
                yield row, row_images(row["images"], sources, embed_scannet)
            return
        roots = SourceRoots.of(sources)
        waiting: deque[dict[str, Any]] = deque()

        def jobs() -> Iterator[RowImagesJob]:
            for row in rows:
                waiting.append(row)
                yield RowImagesJob(roots, tuple(row["images"]), embed_scannet)

        for images in self._executor.map(render_row_images, jobs(), chunksize=ROWS_PER_TASK):
            yield waiting.popleft(), images
