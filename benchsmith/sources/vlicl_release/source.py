"""The VL-ICL release as a :class:`~benchsmith.sources.base.Source`: sample, link, check.

VL-ICL's ``cobsat``, ``fast_count_t2i`` and ``fast_attr_t2i`` come from the release only (their
sources are not benchsmith's), so a rebuild reads them from here (``vlicl.sources.ingest_dir``)
beside the tasks it rebuilds; ``vlicl.mode: ingest`` reads every task from here. No ``fetch``:
the release is a Hugging Face dataset the user downloads (``huggingface-cli download
ys-zong/VL-ICL --repo-type dataset --local-dir DIR``) and links.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Source
from benchsmith.sources.vlicl_release.sample import RELEASE_DIRNAME

GET_IT = (
    "download it: `huggingface-cli download ys-zong/VL-ICL --repo-type dataset --local-dir DIR` "
    "(then run its unzip.sh, or let the plan unpack the zips), and link DIR"
)


def release_tasks(root: Path) -> list[str]:
    """The task folders of a release root (those holding ``query.json``), sorted."""
    return sorted(p.parent.name for p in Path(root).glob("*/query.json"))


class VliclReleaseSource(Source):
    name = "vlicl_release"
    title = "the VL-ICL release (huggingface.co/datasets/ys-zong/VL-ICL)"
    layout = f"OUT/{RELEASE_DIRNAME}/<task>/{{query,support}}.json and <task>/{{query,support}}.zip"
    verbs = ("sample", "link", "check", "prepare")
    not_fetched = f"is not downloaded by benchsmith: {GET_IT}"

    def read_root(self, out: Path) -> Path:
        return Path(out) / RELEASE_DIRNAME

    def sample(self, out: Path, *, seed: int, **_: Any) -> Path:
        from benchsmith.sources.vlicl_release.sample import write_sample_vlicl_release

        return write_sample_vlicl_release(out, seed=seed)

    def _root(self, folder: Path) -> Path:
        folder = Path(folder).expanduser()
        if not release_tasks(folder) and release_tasks(folder / RELEASE_DIRNAME):
            return folder / RELEASE_DIRNAME
        return folder

    def link(self, src: Path, out: Path) -> Path:
        """``out/VL-ICL`` becomes a symlink to ``src`` (the release root, or a folder holding
        ``VL-ICL/``) once its task files parse."""
        from benchsmith.sources.fetching.destination import link_folder

        src = self._root(src).resolve()
        self.check(src)
        return link_folder(Path(out), RELEASE_DIRNAME, src)

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        from benchsmith.core.json_files import load_json

        root = self._root(root)
        tasks = release_tasks(root)
        if not tasks:
            raise SourceError("no VL-ICL task here (no <task>/query.json)", path=root, fix=GET_IT)
        counts = {}
        for task in tasks:
            counts[task] = {}
            for split in ("support", "query"):
                path = root / task / f"{split}.json"
                if not path.is_file():
                    continue
                entries = load_json(path, what="VL-ICL task file", fix=GET_IT)
                if not isinstance(entries, list):
                    raise SourceError("a VL-ICL task file holds a list of entries",
                                      path=path, fix=GET_IT)  # fmt: skip
                counts[task][split] = len(entries)
        return {"root": str(root), "tasks": counts}


VLICL_RELEASE = VliclReleaseSource()
