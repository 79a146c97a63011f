"""ScanNet v2 as a :class:`~benchsmith.sources.base.Source`: sample, link, check, prepare.

ScanNet is licence-gated: ``fetch`` downloads only the scenes a user selects, from the server
named in the user's own access approval (``--base-url``, no default; :mod:`.fetch`). ``link`` points
at a local copy (``scans/``, ``scannetv2-labels.combined.tsv``, ``Tasks/Benchmark/``); ``check``
opens every scene's ``.sens`` index and object boxes and reports what it found.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Option, Source

SCANNET_DIRNAME = "ScanNet"


def link_local_scannet(src: str | Path, dest: str | Path) -> Path:
    """Make ``dest/ScanNet`` a symlink to an existing copy (the folder holding ``scans/``)."""
    from benchsmith.sources.fetching.destination import link_folder
    from benchsmith.sources.scannet.scene import LABELS_FILE

    src = Path(src).expanduser().resolve()
    if not (src / "scans").is_dir() and (src / SCANNET_DIRNAME / "scans").is_dir():
        src = src / SCANNET_DIRNAME
    fix = "point at the ScanNet folder holding scans/ and scannetv2-labels.combined.tsv"
    missing = [n for n in ("scans", LABELS_FILE) if not (src / n).exists()]
    if missing:
        raise SourceError(
            f"not a ScanNet v2 folder: missing {', '.join(missing)}", path=src, fix=fix
        )
    return link_folder(Path(dest), SCANNET_DIRNAME, src)


def check_scannet(root: str | Path) -> dict[str, Any]:
    """Every scene's stream indexes and its objects box up; counts of what was found."""
    from benchsmith.sources.scannet.scene import LABELS_FILE, object_boxes, read_label_map
    from benchsmith.sources.scannet.sens import SensReader

    root = Path(root)
    labels = read_label_map(root / LABELS_FILE)
    scenes = sorted(p for p in (root / "scans").iterdir() if p.is_dir())
    if not scenes:
        raise SourceError("no scenes under scans/", path=root / "scans", fix="link a ScanNet copy")
    frames = skipped = objects = 0
    unknown: set[str] = set()
    for scene in scenes:
        with SensReader(scene / f"{scene.name}.sens") as sens:
            frames += len(sens.valid_frames)
            skipped += sens.skipped_nonfinite
        boxes, missing = object_boxes(scene, labels)
        objects += len(boxes)
        unknown.update(missing)
    return {
        "root": str(root),
        "scenes": len(scenes),
        "frames": frames,
        "frames_with_non_finite_pose": skipped,
        "objects": objects,
        "labels_missing_from_tsv": sorted(unknown),
    }


class ScanNetSource(Source):
    name = "scannet"
    title = "ScanNet v2 (RGB-D scans: .sens streams, meshes, object annotations)"
    layout = (
        "OUT/ScanNet/scans/sceneXXXX_YY/{sceneXXXX_YY.sens,.txt,_vh_clean_2.ply,"
        "_vh_clean_2.0.010000.segs.json,.aggregation.json}, "
        "OUT/ScanNet/scannetv2-labels.combined.tsv, OUT/ScanNet/Tasks/Benchmark/*.txt"
    )
    verbs = ("sample", "fetch", "link", "check", "prepare")
    sample_options = (
        Option("n_scenes", "scenes in the miniature", int, 2),
        Option("n_frames", "frames per scene (one has a -inf pose)", int, 30),
    )
    fetch_options = (
        Option("base_url", "the download server named in your ScanNet access approval", str),
        Option("scenes", "comma-separated scene ids, e.g. scene0000_00,scene0011_00", str),
        Option("lock", "lock file with each file's size and sha256", Path, "scannet.lock.json"),
    )

    def read_root(self, out: Path) -> Path:
        return Path(out) / SCANNET_DIRNAME

    def sample(
        self, out: Path, *, seed: int, n_scenes: int = 2, n_frames: int = 30, **_: Any
    ) -> Path:
        from benchsmith.sources.scannet.sample import write_sample_scannet

        return write_sample_scannet(
            self.read_root(out), n_scenes=n_scenes, seed=seed, n_frames=n_frames
        )

    def fetch(self, out: Path, **options: Any) -> Path:
        from benchsmith.sources.scannet.fetch import fetch_scannet

        return fetch_scannet(
            out, base_url=options["base_url"], scenes=options["scenes"], lock=options["lock"]
        )

    def link(self, src: Path, out: Path) -> Path:
        return link_local_scannet(src, out)

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        root = Path(root)
        if not (root / "scans").is_dir():
            root = self.read_root(root)
        return check_scannet(root)


SCANNET = ScanNetSource()
