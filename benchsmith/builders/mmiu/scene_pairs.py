"""ScanNet frame extraction as one task per scene, on the local pool or on Ray.

Why: finding a scene's frame pairs decodes the depth of nearly every frame of its ``.sens``
stream and reprojects it into the next one. That is the part of an MMIU build that grows with
ScanNet (about 1,500 scans, over a terabyte of streams); everything else grows with the number
of items. Scenes are independent, so each is one task: :func:`scene_frame_pairs` opens the
scene's stream itself (in a worker, on any node that sees the ScanNet folder) and returns its
pairs, a few hundred bytes per scene. The executor returns them in scene order, so the pairs,
and hence the plan, are the same bytes whichever executor and however many workers ran them.

Each scene's pairs are saved as soon as they arrive (:class:`PairsCache`), so a killed plan
resumes from the scenes already done instead of decoding every stream again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from benchsmith.builders.mmiu.config import FrameChoice
from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.builders.mmiu.scenes import FramePair, Scene, frame_pairs, load_scene
from benchsmith.core.atomic import atomic_write_text
from benchsmith.core.executor import ExecutorConfig, open_executor
from benchsmith.core.hashing import canonical_json
from benchsmith.core.progress import log, progress


@dataclass(frozen=True)
class SceneJob:
    """One scene to extract pairs from: the ScanNet root (as the workers see it) and the id."""

    root: str
    scene_id: str
    choice: FrameChoice


def scene_frame_pairs(job: SceneJob) -> list[FramePair]:
    """Every frame pair of one scene, read from its own stream (module level: workers and Ray
    tasks import it by name). Labels are not needed for pairs, so none are read."""
    root = Path(job.root)
    with ImageSources(scannet=root) as sources:
        scene = load_scene(root, job.scene_id, sources, {})
        return list(frame_pairs(scene, job.choice))


CACHE_FORMAT = 1


@dataclass(frozen=True)
class PairsCache:
    """Finished scenes' pairs, one JSON file per scene and frame choice, in ``folder``.

    The key covers what the pairs are computed from without reading the stream again: the
    frame choice, the stream's size and modification time, and the scene as the driver indexed
    it (frame numbers, aligned poses, depth intrinsics). A copied, re-downloaded or edited
    stream gets a new key, so a stale entry is never used; an entry is only ever recomputed."""

    folder: Path

    def path(self, scene: Scene, choice: FrameChoice) -> Path:
        stream = (scene.directory / f"{scene.scene_id}.sens").stat()
        digest = hashlib.sha256(canonical_json({
            "format": CACHE_FORMAT, "scene": scene.scene_id, "choice": asdict(choice),
            "size": stream.st_size, "mtime_ns": stream.st_mtime_ns,
            "intrinsics": list(scene.depth_intrinsics), "frames": scene.frames,
        }).encode())  # fmt: skip
        for frame in scene.frames:
            digest.update(np.ascontiguousarray(scene.poses[frame], dtype=np.float64).tobytes())
        return self.folder / f"{scene.scene_id}-{digest.hexdigest()[:24]}.json"

    def get(self, scene: Scene, choice: FrameChoice) -> list[FramePair] | None:
        path = self.path(scene, choice)
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            return [FramePair(scene.scene_id, int(a), int(b), float(t), float(r), float(o))
                    for a, b, t, r, o in rows]  # fmt: skip
        except (OSError, ValueError, TypeError):  # absent or damaged: computed again
            return None

    def put(self, scene: Scene, choice: FrameChoice, pairs: list[FramePair]) -> None:
        rows = [[p.first, p.second, p.translation_m, p.rotation_deg, p.overlap] for p in pairs]
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path(scene, choice), json.dumps(rows) + "\n")


def all_frame_pairs(
    scenes: list[Scene],
    choice: FrameChoice,
    executor: ExecutorConfig | None = None,
    cache: PairsCache | None = None,
) -> list[tuple[Scene, FramePair]]:
    """Every scene's pairs, in scene order then frame order. Scenes in ``cache`` are read from
    it; the others are computed (here without an executor or with one local worker, else one
    task per scene) and saved to it as each finishes."""
    found: dict[str, list[FramePair]] = {}
    if cache is not None:
        for scene in scenes:
            if (pairs := cache.get(scene, choice)) is not None:
                found[scene.scene_id] = pairs
        if found:
            log(f"mmiu plan: frame pairs of {len(found)} of {len(scenes)} scene(s) from "
                f"{cache.folder}")  # fmt: skip
    todo = [scene for scene in scenes if scene.scene_id not in found]
    for scene, pairs in _extract(todo, choice, executor):
        found[scene.scene_id] = pairs
        if cache is not None:
            cache.put(scene, choice, pairs)
    return [(scene, pair) for scene in scenes for pair in found[scene.scene_id]]


def _extract(
    scenes: list[Scene], choice: FrameChoice, executor: ExecutorConfig | None
) -> Iterator[tuple[Scene, list[FramePair]]]:
    """``(scene, its pairs)`` in scene order, with a progress bar."""
    in_process = executor is None or (executor.kind == "local" and executor.workers == 1)
    if in_process or not scenes:
        yield from _by_scene(scenes, (list(frame_pairs(scene, choice)) for scene in scenes))
        return
    jobs = [SceneJob(str(scene.directory.parent.parent), scene.scene_id, choice)
            for scene in scenes]  # fmt: skip
    with open_executor(executor, preload=[__name__]) as pool:
        log(f"mmiu plan: frame pairs of {len(jobs)} scene(s) on {executor.kind} "
            f"({pool.workers} worker(s))")  # fmt: skip
        yield from _by_scene(scenes, pool.map(scene_frame_pairs, jobs))


def _by_scene(
    scenes: list[Scene], found: Iterable[list[FramePair]]
) -> Iterator[tuple[Scene, list[FramePair]]]:
    found = progress(found, total=len(scenes), desc="frame pairs", unit="scene")
    yield from zip(scenes, found, strict=True)
