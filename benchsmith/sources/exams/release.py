"""The official MULTI release, read as it ships (``MULTI_v1.3.1_20251016_release.zip`` unzipped).

Layout (README of OpenDFM/MULTI-Benchmark)::

    ROOT/problem_v1.3.1_20241210.json            problems with answers (public since 2025-10)
    ROOT/problem_v1.3.1_20241210_release.json    the same without answers
    ROOT/knowledge_v1.2.2_20240212_release.json  MULTI-Extend: {key: {knowledge, knowledge_content, knowledge_images}}
    ROOT/hard_list_v1.3.0_20241203.json          MULTI-Elite: a JSON list of question ids
    ROOT/captions_v1.3.1_20241210_{blip,points}.csv, ocr_v1.3.1_20241210_{easyocr,points}.csv
    ROOT/images/<subject code>/<n>_<k>.png

A problem (``{problem_id: record}``) has a shared ``problem_content`` and per question
``problem_content_list[i]``, ``problem_type_list[i]`` (单选/多选/填空/解答/其他),
``problem_answer_list[i]`` (absent in the ``_release`` file), ``problem_analysis_list[i]``;
``knowledge`` (a list, or a bare string in some driving items), ``education``, ``subject``,
``img_paths`` (``../data/images/<code>/<n>_<k>.png``; ``[IMAGE_n]`` in a text is a **1-based**
index into it), ``difficulty``, ``quality``. The CSVs are ``path,text`` lines written unquoted,
split at the first comma. File names carry versions; the newest of each kind is used unless
named.

Nothing here interprets the questions (that is the MULTI builder's); this module only reads,
with every fault named: malformed JSON (file and position), a record missing a field, lists of
different lengths, an ``[IMAGE_n]`` past ``img_paths``, a missing image.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError

PROBLEM_GLOB = "problem_v*.json"
KNOWLEDGE_GLOB = "knowledge_v*.json"
HARD_GLOB = "hard_list_v*.json"
IMAGE_TAG = re.compile(r"\[IMAGE_(\d+)\]")
REQUIRED = ("problem_content", "problem_content_list", "problem_type_list", "img_paths")
PER_QUESTION = ("problem_content_list", "problem_type_list", "problem_answer_list",
                "problem_analysis_list")  # fmt: skip
TYPES = {"单选": "SA", "多选": "MA", "填空": "FB", "解答": "OP", "其他": "Other"}
FIX = "use the release files as published (re-extract MULTI_v*_release.zip)"
VERSION = re.compile(r"_v(\d+(?:\.\d+)*)_(\d{8})")


def version_key(path: Path) -> tuple:
    match = VERSION.search(path.name)
    if not match:
        return ((), "", path.name)
    return (tuple(int(p) for p in match.group(1).split(".")), match.group(2), path.name)


def newest(root: Path, pattern: str, *, release: bool | None = None) -> Path | None:
    files = [
        p for p in root.glob(pattern) if release is None or p.stem.endswith("_release") == release
    ]
    return max(files, key=version_key) if files else None


def load_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise SourceError(f"{what} missing", path=path, fix=FIX)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise SourceError(f"{what} is not UTF-8 ({exc.reason})", path=path, fix=FIX) from exc
    except json.JSONDecodeError as exc:
        raise SourceError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column "
                          f"{exc.colno}", path=path, fix=FIX) from exc  # fmt: skip


def image_relative(path: str) -> str:
    """``../data/images/czls/502_1.png`` -> ``images/czls/502_1.png`` (the release's own paths
    are relative to its eval folder)."""
    text = path.replace("\\", "/")
    index = text.rfind("images/")
    return text[index:] if index >= 0 else text.lstrip("./")


def image_tags(text: str) -> list[int]:
    """The 1-based image numbers a text refers to, in order."""
    return [int(m) for m in IMAGE_TAG.findall(text or "")]


def read_csv_texts(path: Path) -> dict[str, str]:
    """A ``path,text`` CSV as the release writes it (unquoted; split at the first comma)."""
    out = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        if "," not in line:
            raise SourceError(f"line {number} has no comma (expected path,text)", path=path,
                              fix=FIX)  # fmt: skip
        image, text = line.split(",", 1)
        out[image_relative(image.strip())] = text.strip()
    return out


@dataclass
class MultiRelease:
    root: Path
    problem_file: Path
    problems: dict[str, dict[str, Any]]
    knowledge: dict[str, dict[str, Any]] = field(default_factory=dict)
    hard_list: list[str] = field(default_factory=list)
    captions: dict[str, dict[str, str]] = field(default_factory=dict)  # kind -> path -> text
    ocr: dict[str, dict[str, str]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)  # what was read, by role

    @property
    def has_answers(self) -> bool:
        return not self.problem_file.stem.endswith("_release")

    def image_path(self, relative: str, where: str) -> Path:
        path = self.root / image_relative(relative)
        if not path.is_file():
            raise SourceError(f"{where}: image {relative!r} is missing", path=path, fix=FIX)
        return path

    def question_ids(self) -> Iterator[str]:
        for problem_id, record in self.problems.items():
            for index in range(len(record["problem_type_list"])):
                yield f"{problem_id}_{index}"

    def knowledge_keys(self, record: dict[str, Any]) -> list[str]:
        """``knowledge`` as a list (some driving items store one bare string)."""
        value = record.get("knowledge") or []
        return [value] if isinstance(value, str) else [str(v) for v in value]


def check_problem(problem_id: str, record: Any, path: Path) -> None:
    where = f"problem {problem_id}"
    if not isinstance(record, dict):
        raise SourceError(f"{where} is not an object", path=path, fix=FIX)
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise SourceError(f"{where} lacks {missing}", path=path, fix=FIX)
    n = len(record["problem_type_list"])
    for key in PER_QUESTION:
        if key in record and len(record[key]) != n:
            raise SourceError(f"{where}: {key} has {len(record[key])} entries for {n} questions",
                              path=path, fix=FIX)  # fmt: skip
    unknown = [t for t in record["problem_type_list"] if t not in TYPES]
    if unknown:
        raise SourceError(f"{where}: unknown question type(s) {unknown}; known: {list(TYPES)}",
                          path=path, fix=FIX)  # fmt: skip
    images = record["img_paths"] or []
    texts = [record["problem_content"], *record["problem_content_list"]]
    for number in (n for text in texts for n in image_tags(text)):
        if not 1 <= number <= len(images):
            raise SourceError(f"{where}: [IMAGE_{number}] points past its {len(images)} "
                              "img_paths", path=path, fix=FIX)  # fmt: skip


def read_release(root: str | Path, problem_file: str | Path | None = None) -> MultiRelease:
    """The release in ``root`` (answers file preferred); every problem checked, every image
    named by a problem or a knowledge entry checked to exist."""
    root = Path(root)
    if not root.is_dir():
        raise SourceError("MULTI release folder missing", path=root,
                          fix="run `benchsmith source prepare exams`, or link your copy")  # fmt: skip
    path = Path(problem_file) if problem_file else (
        newest(root, PROBLEM_GLOB, release=False) or newest(root, PROBLEM_GLOB, release=True)
    )  # fmt: skip
    if path is None:
        raise SourceError("no problem_v*.json in the MULTI release", path=root, fix=FIX)
    problems = load_json(path, "problem file")
    if not isinstance(problems, dict):
        raise SourceError("problem file is not an object keyed by problem id", path=path, fix=FIX)
    release = MultiRelease(root, path, problems, files={"problems": path})
    for problem_id, record in problems.items():
        check_problem(problem_id, record, path)
        for image in record["img_paths"] or []:
            release.image_path(image, f"problem {problem_id}")
    knowledge = newest(root, KNOWLEDGE_GLOB)
    if knowledge:
        release.knowledge = load_json(knowledge, "knowledge file")
        release.files["knowledge"] = knowledge
        for key, entry in release.knowledge.items():
            for image in entry.get("knowledge_images") or []:
                release.image_path(image, f"knowledge {key!r}")
    hard = newest(root, HARD_GLOB)
    if hard:
        release.hard_list = [str(q) for q in load_json(hard, "hard list")]
        release.files["hard_list"] = hard
        known = set(release.question_ids())
        unknown = [q for q in release.hard_list if q not in known]
        if unknown:
            raise SourceError(f"the hard list names {len(unknown)} question(s) not in the "
                              f"problem file (e.g. {unknown[0]})", path=hard, fix=FIX)  # fmt: skip
    for kind, store in (("captions", release.captions), ("ocr", release.ocr)):
        for csv in sorted(root.glob(f"{kind}_v*.csv")):
            source = csv.stem.rsplit("_", 1)[-1]
            store[source] = read_csv_texts(csv)
            release.files[f"{kind}_{source}"] = csv
    return release
