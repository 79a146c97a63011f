"""ScanNet frame extraction as one task per scene, on the local pool or on Ray.

Why: a scene's stream is indexed (a record before every payload: on a network filesystem that
reads most of the file) and its frame pairs are found by decoding the depth of nearly every frame
and reprojecting it into the next. That is the part of an MMIU build that grows with ScanNet
(about 1,500 scans, over a terabyte of streams); everything else grows with the number of items.
Scenes are independent, so each is one task: :func:`survey_scene` opens the scene's stream
itself (in a worker, on any node that sees the ScanNet folder) and returns a
:class:`SceneSurvey`: the stream's index (96 bytes a frame), so the driver opens the streams it
later renders from without walking them again, and the scene's pairs. The executor returns the
surveys in scene order, so the pairs, and hence the plan, are the same bytes whichever executor
and however many workers ran them.

Each survey is saved as soon as it arrives (:class:`SurveyCache`), so a killed plan resumes
from the scenes already done instead of reading every stream again.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from benchsmith.builders.mmiu.config import FrameChoice
from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.builders.mmiu.scenes import FramePair, frame_pairs, load_scene
from benchsmith.core.atomic import atomic_path
from benchsmith.core.executor import ExecutorConfig, open_executor
from benchsmith.core.hashing import canonical_json, sha256_file
from benchsmith.core.progress import log, progress
from benchsmith.sources.scannet.scene import scene_file
from benchsmith.sources.scannet.sens import SensIndex

CACHE_FORMAT = 2


@dataclass(frozen=True)
class SceneJob:
    """One scene to survey: the ScanNet root (as the workers see it) and the scene id."""

    root: str
    scene_id: str
    choice: FrameChoice


@dataclass(frozen=True)
class SceneSurvey:
    index: SensIndex  # the stream's header and frame records
    pairs: list[FramePair]  # in frame order


def survey_scene(job: SceneJob) -> SceneSurvey:
    """One scene's stream index and frame pairs, read from its own stream (module level:
    workers and Ray tasks import it by name). Labels are not needed for pairs: none are read."""
    root = Path(job.root)
    with ImageSources(scannet=root) as sources:
        scene = load_scene(root, job.scene_id, sources, {})
        pairs = list(frame_pairs(scene, job.choice))
        return SceneSurvey(sources.reader(job.scene_id).index(), pairs)


@dataclass(frozen=True)
class SurveyCache:
    """Finished surveys, one ``.npz`` per scene and frame choice, in ``folder`` (arrays only:
    read back without unpickling anything).

    The key covers what a survey is computed from, without reading the stream: the frame
    choice, the stream's size and modification time, and the scene's info file (its axis
    alignment moves every pose). A copied, re-downloaded or edited stream gets a new key, so a
    stale entry is never used; a damaged entry is surveyed again."""

    folder: Path

    def path(self, root: Path, scene_id: str, choice: FrameChoice) -> Path:
        stream = (root / "scans" / scene_id / f"{scene_id}.sens").stat()
        key = canonical_json({
            "format": CACHE_FORMAT, "scene": scene_id, "choice": asdict(choice),
            "size": stream.st_size, "mtime_ns": stream.st_mtime_ns,
            "info": sha256_file(scene_file(root / "scans" / scene_id, ".txt")),
        })  # fmt: skip
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        return self.folder / f"{scene_id}-{digest}.npz"

    def get(self, root: Path, scene_id: str, choice: FrameChoice) -> SceneSurvey | None:
        try:
            with np.load(self.path(root, scene_id, choice), allow_pickle=False) as saved:
                return _survey_from_arrays(scene_id, {name: saved[name] for name in saved.files})
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
            return None  # absent or damaged: surveyed again

    def put(self, root: Path, scene_id: str, choice: FrameChoice, survey: SceneSurvey) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path(root, scene_id, choice)) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, **_survey_arrays(survey))


def _survey_arrays(survey: SceneSurvey) -> dict[str, np.ndarray]:
    pairs = [[p.first, p.second, p.translation_m, p.rotation_deg, p.overlap] for p in survey.pairs]
    return {**survey.index.to_arrays(), "pairs": np.array(pairs, dtype=np.float64).reshape(-1, 5)}


def _survey_from_arrays(scene_id: str, arrays: dict[str, np.ndarray]) -> SceneSurvey:
    pairs = [FramePair(scene_id, int(a), int(b), float(t), float(r), float(o))
             for a, b, t, r, o in arrays["pairs"].tolist()]  # fmt: skip
    return SceneSurvey(SensIndex.from_arrays(arrays), pairs)


def survey_scenes(
    root: Path,
    scene_ids: list[str],
    choice: FrameChoice,
    executor: ExecutorConfig | None = None,
    cache: SurveyCache | None = None,
) -> dict[str, SceneSurvey]:
    """Every scene's survey, in scene order. Scenes in ``cache`` are read from it; the others
    are surveyed (here without an executor or with one local worker, else one task per scene)
    and saved to it as each finishes."""
    found: dict[str, SceneSurvey] = {}
    if cache is not None:
        for scene_id in scene_ids:
            if (survey := cache.get(root, scene_id, choice)) is not None:
                found[scene_id] = survey
        if found:
            log(f"mmiu plan: frame pairs of {len(found)} of {len(scene_ids)} scene(s) from "
                f"{cache.folder}")  # fmt: skip
    todo = [SceneJob(str(root), s, choice) for s in scene_ids if s not in found]
    for job, survey in _surveyed(todo, executor):
        found[job.scene_id] = survey
        if cache is not None:
            cache.put(root, job.scene_id, choice, survey)
    return {scene_id: found[scene_id] for scene_id in scene_ids}


def _surveyed(
    jobs: list[SceneJob], executor: ExecutorConfig | None
) -> Iterator[tuple[SceneJob, SceneSurvey]]:
    """``(job, survey)`` in job order, with a progress bar."""
    if executor is None or executor.in_process or not jobs:
        yield from _paired(jobs, map(survey_scene, jobs))
        return
    with open_executor(executor, preload=[__name__]) as pool:
        log(f"mmiu plan: frame pairs of {len(jobs)} scene(s) on {executor.kind} "
            f"({pool.workers} worker(s))")  # fmt: skip
        yield from _paired(jobs, pool.map(survey_scene, jobs))


def _paired(
    jobs: list[SceneJob], surveys: Iterable[SceneSurvey]
) -> Iterator[tuple[SceneJob, SceneSurvey]]:
    surveys = progress(surveys, total=len(jobs), desc="frame pairs", unit="scene")
    yield from zip(jobs, surveys, strict=True)
