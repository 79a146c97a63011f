"""``benchsmith build mmiu rehydrate``: embed a reference-only dataset's ScanNet images.

A published MMIU folder made with ``--scannet-images reference`` (the default, and the only
form that may be shared) holds no ScanNet pixels: each such image is a reference in
``image_refs`` (scene, frame, rendering, sha256). This reads the folder config by config,
renders every missing image from the user's ScanNet copy exactly as the build did, checks its
sha256 (a mismatch names the scene and frame), and writes a complete copy through the one
publisher: same rows, same version, ``scannet_images: embed``, auditable like any build. Memory
is one batch of rows at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.features import SPLIT, features_for
from benchsmith.builders.mmiu.images import ImageSources, checked_render, ref_extension
from benchsmith.builders.mmiu.publication import MmiuPublication
from benchsmith.core.errors import BenchsmithError
from benchsmith.family.base import Card, ConfigSpec, Publication, PublishRequest
from benchsmith.hf.image_names import neutral_image_name
from benchsmith.hf.layout import SplitWritten
from benchsmith.hf.roots import resolve_roots

PUBLISHER_KEYS = ("family", "version", "benchsmith_version", "code_revision", "configs")


def filled(row: dict[str, Any], sources: ImageSources) -> dict[str, Any]:
    images = []
    for image, ref in zip(row["images"], row["image_refs"], strict=True):
        if image is None:
            data = checked_render(ref, sources)
            image = {"bytes": data, "path": neutral_image_name(data, ref_extension(ref))}
        images.append(image)
    return {**row, "images": images}


class RehydratedPublication(Publication):
    family = "mmiu"
    card_template = "mmiu.md.j2"
    audit_how = MmiuPublication.audit_how  # carded as the build it copies: one audit

    def __init__(self, dataset: Path, scannet: Path | None, release: Path | None = None):
        from benchsmith.hf.reader import read_build_info

        self.dataset = Path(dataset)
        self.info = read_build_info(self.dataset)
        if self.info.get("family") != "mmiu":
            raise BenchsmithError(f"{self.dataset} is a {self.info.get('family')} dataset, not "
                                  "MMIU", path=self.dataset, fix="pass a published MMIU folder")  # fmt: skip
        ingested = self.info.get("mode") == "ingest"
        if ingested and (release is None or not (Path(release) / "all.parquet").is_file()):
            raise BenchsmithError("this dataset was ingested from the MMIU release: pass --release "
                                  "DIR, your copy of it (holding all.parquet)", path=release,
                                  fix="pass --release DIR")  # fmt: skip
        if not ingested and (scannet is None or not (Path(scannet) / "scans").is_dir()):
            raise BenchsmithError("no scans/ folder in the ScanNet copy", path=scannet,
                                  fix="pass --scannet DIR, the ScanNet v2 root (holding scans/)")  # fmt: skip
        self.scannet = Path(scannet) if scannet else None
        self.release = Path(release) if release else None

    def input_paths(self) -> list[Path]:
        return [self.dataset, *(p for p in (self.scannet, self.release) if p)]

    def configs(self) -> Iterator[ConfigSpec]:
        for config in self.info["configs"]:
            yield ConfigSpec(config, features_for(config), (SPLIT,),
                             lambda split, max_bytes, config=config: self._rows(config))  # fmt: skip

    def _rows(self, config: str) -> Iterator[list[dict[str, Any]]]:
        from benchsmith.hf.reader import iter_row_batches

        with ImageSources(scannet=self.scannet, release=self.release) as sources:
            for _, rows in iter_row_batches(self.dataset, config, SPLIT, batch_size=32):
                yield [filled(row, sources) for row in rows]

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        family = {k: v for k, v in self.info.items() if k not in PUBLISHER_KEYS}
        roots = resolve_roots(self.info.get("roots"), self.dataset)
        for name, folder in (("scannet", self.scannet), ("release", self.release)):
            if folder is not None:
                roots[name] = str(folder.absolute())
        return {**family, "roots": roots, "scannet_images": "embed",
                "rehydrated_from": {"version": self.info.get("version"),
                                    "code_revision": self.info.get("code_revision")}}  # fmt: skip

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        from benchsmith.builders.mmiu.card import mmiu_card

        return mmiu_card(info)

    def summary(self, info: dict[str, Any]) -> str:
        return "mmiu rehydrate: ScanNet images embedded from your copy (keep this folder private)"


def rehydrate(
    dataset: Path,
    scannet: Path | None,
    out: Path,
    max_shard_mb: float = 256.0,
    release: Path | None = None,
) -> PublishRequest:
    """The complete copy to write: same rows, same version, every image embedded."""
    publication = RehydratedPublication(dataset, scannet, release)
    version = str(publication.info.get("version", "0.0.0"))
    return PublishRequest(publication, Path(out), version, max_shard_mb)
