"""What every task generator is handed: the config, the open sources, and shared helpers.

Generators are pure given this context: every random draw comes from a generator derived from
(seed, task, item key), so building one task, or the tasks in another order, changes nothing
else (ARCHITECTURE.md contract 1).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.builders.mmiu.config import MmiuConfig
from benchsmith.builders.mmiu.images import ImageSources, image_ref
from benchsmith.builders.mmiu.scenes import FramePair, Scene, far_frames
from benchsmith.core.hashing import sha256_file
from benchsmith.core.records import source_ref
from benchsmith.core.rng import derived_rng
from benchsmith.options.distractors import format_matrix
from benchsmith.sources.coco.reader import CocoCaptions, CocoImage

TWIN_BITS = 4  # perceptual-hash bits within which two COCO pictures are one (MMNeedle's default)
SCANNET_LICENSE = "ScanNet Terms of Use (non-commercial research; no redistribution)"
SCANNET_URL = "http://www.scan-net.org/"


@dataclass
class TaskContext:
    config: MmiuConfig
    sources: ImageSources
    scenes: list[Scene] = field(default_factory=list)
    coco: CocoCaptions | None = None
    skips: Counter = field(default_factory=Counter)  # (task, reason) -> count
    notes: Counter = field(default_factory=Counter)  # (task, what) -> items kept with it
    _file_hashes: dict[Path, str] = field(default_factory=dict)
    # every scene's pairs, found once by the plan's scene survey (:mod:`..scene_survey`)
    _pairs: list[tuple[Scene, FramePair]] = field(default_factory=list)
    _pictures: dict[str, list] = field(default_factory=dict)  # task -> hashes of used pictures

    def rng(self, task: str, key: str) -> np.random.Generator:
        return derived_rng(self.config.seed, "mmiu", f"{task}/{key}")

    def order(self, task: str, n: int) -> list[int]:
        """A seeded order in which a task tries its candidate slots."""
        return [int(i) for i in derived_rng(self.config.seed, "mmiu", task).permutation(n)]

    def pairs(self) -> list[tuple[Scene, FramePair]]:
        """Every scene's frame pairs (scene order, then frame order), shared by the tasks that
        draw from them."""
        return self._pairs

    def use_pairs(self, pairs_by_scene: dict[str, list[FramePair]]) -> None:
        """The pairs the plan's scene survey found (depth reprojection, the costly part, runs
        there: one task per scene on the executor)."""
        self._pairs = [(scene, pair) for scene in self.scenes
                       for pair in pairs_by_scene[scene.scene_id]]  # fmt: skip

    def far_candidates(
        self, task: str, key: str, scene: Scene, used: list[int], n: int
    ) -> list[int] | None:
        """``n`` frames of ``scene`` far from every frame in ``used``, drawn with the item's
        generator; None (and a counted skip) when the scene has too few."""
        far = far_frames(scene, used, self.config.frames)
        if len(far) < n:
            self.skip(task, "too few far frames in the scene for distractors")
            return None
        return [far[int(k)] for k in self.rng(task, key).choice(len(far), n, replace=False)]

    def new_picture(self, task: str, image: CocoImage) -> bool:
        """Whether ``image`` shows a picture the task has not used yet. COCO holds some photos
        under two ids (identical or re-encoded): two items of a task on one picture would be one
        item twice, so a twin of a used picture is a counted skip. Pictures are compared by
        decoded pixels and by perceptual hash (within :data:`TWIN_BITS`), as the MMNeedle twins
        step does."""
        from benchsmith.images.hashes import hash_image

        assert self.sources.coco_images is not None
        hashed = hash_image((self.sources.coco_images / image.file_name).read_bytes())
        used = self._pictures.setdefault(task, [])
        for other in used:
            same = other.pixel_sha256 == hashed.pixel_sha256 or (
                not (other.low_information or hashed.low_information)
                and (other.phash ^ hashed.phash).bit_count() <= TWIN_BITS
            )
            if same:
                self.skip(task, "a twin of a COCO picture the task already used")
                return False
        used.append(hashed)
        return True

    def skip(self, task: str, reason: str) -> None:
        self.skips[(task, reason)] += 1

    def note(self, task: str, what: str) -> None:
        """Count an item that was kept with a weakness worth saying in the card."""
        self.notes[(task, what)] += 1

    def pose_text(self, pose: np.ndarray) -> str:
        return format_matrix(np.asarray(pose)[:3], self.config.options.pose_decimals)

    # -- images and provenance ---------------------------------------------------------------

    def color(self, scene: Scene, frame: int) -> dict[str, Any]:
        return image_ref("scannet_color", scene=scene.scene_id, frame=frame)

    def depth(self, scene: Scene, frame: int) -> dict[str, Any]:
        return image_ref(
            "scannet_depth",
            scene=scene.scene_id,
            frame=frame,
            max_m=self.config.options.depth_display_max_m,
        )

    def frame_source(self, scene: Scene, frame: int) -> dict[str, str]:
        """One frame of a ``.sens`` stream: its sha256 covers the frame's colour and depth
        payloads, which the audit re-reads with one seek (the stream is never hashed whole)."""
        reader = self.sources.reader(scene.scene_id)
        digest = hashlib.sha256(reader.color_bytes(frame))
        digest.update(reader.depth_bytes(frame))
        return source_ref(
            dataset="scannet",
            split="v2",
            id=f"{scene.scene_id}/frame/{frame}",
            file=f"scans/{scene.scene_id}/{scene.scene_id}.sens",
            sha256=digest.hexdigest(),
            license=SCANNET_LICENSE,
            url=SCANNET_URL,
        )

    def scene_file_source(self, scene: Scene, suffix: str) -> dict[str, str]:
        path = scene.directory / f"{scene.scene_id}{suffix}"
        return self.file_source("scannet", path, f"scans/{scene.scene_id}/{path.name}",
                                scene.scene_id, SCANNET_LICENSE, SCANNET_URL)  # fmt: skip

    def file_source(
        self, dataset: str, path: Path, relative: str, ident: str, license: str, url: str
    ) -> dict[str, str]:
        if path not in self._file_hashes:
            self._file_hashes[path] = sha256_file(path)
        return source_ref(dataset=dataset, split="v2" if dataset == "scannet" else "val2014",
                          id=ident, file=relative, sha256=self._file_hashes[path],
                          license=license, url=url)  # fmt: skip

    def coco_source(self, image: CocoImage) -> dict[str, str]:
        assert self.coco is not None and self.sources.coco_images is not None
        path = self.sources.coco_images / image.file_name
        return self.file_source(
            "coco",
            path,
            f"val2014/{image.file_name}",
            str(image.image_id),
            self.coco.license_name(image.license) or "",
            image.flickr_url or image.coco_url or "",
        )
