"""Exam sources for MULTI as a :class:`~benchsmith.sources.base.Source`: three input kinds.

``OUT/release/`` the official MULTI release (:mod:`.release`), ``OUT/html/`` raw crawled
question pages (:mod:`.html_sample`), ``OUT/pages/`` scanned exam pages with their ground truth
(:mod:`.pages_sample`). ``sample`` writes all three; ``link`` takes your copy of the release
(the unzipped folder, linked, or ``MULTI_v*_release.zip``, extracted with path checks) or an
exams folder in this layout (each part linked); ``check``
reads what is there and counts it; ``fetch`` downloads the release zip from its Hugging Face
repository (:mod:`.fetch`) and extracts it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Option, Source

RELEASE_DIRNAME, HTML_DIRNAME, PAGES_DIRNAME = "release", "html", "pages"
LINK_FIX = "point at the unzipped MULTI release (holding problem_v*.json) or its zip"


def _release_root(folder: Path) -> Path | None:
    """The folder holding ``problem_v*.json``: ``folder`` itself, or the one folder below it
    that does (a zip's top folder, the README's ``data/``); None when there is none, and an
    error when several folders below it could be meant."""
    if any(folder.glob("problem_v*.json")):
        return folder
    below = sorted({p.parent for p in folder.glob("*/problem_v*.json")})
    if len(below) > 1:
        raise SourceError(
            f"{len(below)} folders below this one hold a MULTI release "
            f"({', '.join(b.name for b in below[:3])}...)",
            path=folder,
            fix="point at the release folder itself",
        )
    return below[0] if below else None


def link_local_release(src: str | Path, out: str | Path) -> Path:
    from benchsmith.core.atomic import atomic_directory
    from benchsmith.sources.fetching.archive import check_zip, safe_extract_zip
    from benchsmith.sources.fetching.destination import link_folder, replace_symlink

    src, out = Path(src).expanduser().absolute(), Path(out)
    if src.is_file() and src.suffix == ".zip":
        check_zip(src, corrupt_fix="download the release zip again")
        with atomic_directory(out / RELEASE_DIRNAME) as staging, tempfile.TemporaryDirectory(
            dir=out
        ) as scratch:  # fmt: skip
            safe_extract_zip(src, Path(scratch), corrupt_fix="download the release zip again")
            root = _release_root(Path(scratch))
            if root is None:
                raise SourceError("the zip holds no problem_v*.json", path=src, fix=LINK_FIX)
            for item in root.iterdir():
                item.rename(staging / item.name)
        return out / RELEASE_DIRNAME
    parts = [n for n in (RELEASE_DIRNAME, HTML_DIRNAME, PAGES_DIRNAME) if (src / n).is_dir()]
    if parts:  # an exams folder as this source writes it: link each part it has
        out.mkdir(parents=True, exist_ok=True)
        for name in parts:
            replace_symlink(out / name, src / name,
                            fix="remove it or choose another destination folder")  # fmt: skip
        return out
    root = _release_root(src) if src.is_dir() else None
    if root is None:
        raise SourceError("not a MULTI release: no problem_v*.json", path=src, fix=LINK_FIX)
    return link_folder(out, RELEASE_DIRNAME, root)


def check_exams(root: Path) -> dict[str, Any]:
    from benchsmith.sources.exams.release import read_release

    summary: dict[str, Any] = {"root": str(root)}
    release_dir = root / RELEASE_DIRNAME
    if release_dir.exists():
        release = read_release(release_dir)
        summary["release"] = {
            "problem_file": release.problem_file.name,
            "answers": release.has_answers,
            "problems": len(release.problems),
            "questions": sum(1 for _ in release.question_ids()),
            "knowledge": len(release.knowledge),
            "hard_list": len(release.hard_list),
            "captions": sorted(release.captions),
            "ocr": sorted(release.ocr),
        }
    if (root / HTML_DIRNAME).is_dir():
        summary["html_pages"] = len(list((root / HTML_DIRNAME).glob("*.html")))
    if (root / PAGES_DIRNAME).is_dir():
        summary["page_images"] = len(list((root / PAGES_DIRNAME).glob("*.png")))
    if len(summary) == 1:
        raise SourceError("no exam sources here (release/, html/ or pages/)", path=root,
                          fix="run `benchsmith source sample exams --out DIR`, or link a release")  # fmt: skip
    return summary


class ExamsSource(Source):
    name = "exams"
    title = "Exam sources for MULTI (official release, raw HTML pages, scanned pages)"
    layout = (
        "OUT/release/{problem_v*.json,knowledge_v*.json,hard_list_v*.json,*.csv,images/}, "
        "OUT/html/*.html + img/, OUT/pages/<page>.<variant>.png + .gt.txt + pages.json"
    )
    verbs = ("sample", "fetch", "link", "check", "prepare")
    fetch_options = (
        Option("repo", "Hugging Face dataset repository", str, "OpenDFM/MULTI-Benchmark"),
        Option("filename", "the release zip in it", str, "MULTI_v1.3.1_20251016_release.zip"),
        Option("revision", "a commit id to pin (default: main)", str),
        Option("lock", "lock file with the zip's size, sha256 and commit", Path, "multi.lock.json"),
        Option("download_dir", "where the zip is kept for reruns (default: OUT/downloads)", Path),
    )

    def sample(self, out: Path, *, seed: int, **_: Any) -> Path:
        from benchsmith.core.atomic import atomic_directory
        from benchsmith.sources.exams.html_sample import write_sample_html
        from benchsmith.sources.exams.pages_sample import write_sample_pages
        from benchsmith.sources.exams.release_sample import write_sample_release

        with atomic_directory(out) as staging:
            write_sample_release(staging / RELEASE_DIRNAME)
            (staging / HTML_DIRNAME).mkdir()
            write_sample_html(staging / HTML_DIRNAME)
            (staging / PAGES_DIRNAME).mkdir()
            write_sample_pages(staging / PAGES_DIRNAME, seed=seed)
        return Path(out)

    def fetch(self, out: Path, **options: Any) -> Path:
        from benchsmith.sources.exams.fetch import fetch_multi_release

        fetch_multi_release(out, **{k: v for k, v in options.items() if v is not None})
        return Path(out)

    def link(self, src: Path, out: Path) -> Path:
        return link_local_release(src, out)

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        return check_exams(Path(root))


EXAMS = ExamsSource()
