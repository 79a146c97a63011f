"""The two build steps behind the DVC stages ``multi_questions`` and ``multi_select``.

``build_questions`` reads the official release (``exams/release``) and the converted crawled
pages (the ``ocr`` step's folder), splits every problem into questions and cleans them
(:mod:`.cleaning`); every image is decoded once and fingerprinted for the next step. A question
whose image does not decode is a counted skip, not an abort.

``select_questions`` removes near duplicates across the whole pool (:mod:`.near_dups`), applies
Appendix D to the problems ``selection.apply_to`` names (:mod:`.selection`), marks Elite
(:mod:`.elite`) and attaches Extend. Both write a folder atomically: ``build_info.json``
(config, seed, roots, source files with sha256, counts, skips), ``questions.jsonl`` and, for
select, ``removed.jsonl`` (every question removed, with its decision) and ``extend.jsonl``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.builders.multi.cleaning import clean_questions
from benchsmith.builders.multi.config import MultiConfig, config_from_dict
from benchsmith.builders.multi.questions import SourceProblem, questions_of
from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash, sha256_file
from benchsmith.core.json_files import read_jsonl
from benchsmith.core.progress import log
from benchsmith.core.records import decision_record

REBUILD = "rerun `benchsmith build multi questions` (and `select`)"


@dataclass(frozen=True)
class MultiSources:
    release: Path | None  # the unzipped release (problem_v*.json ...)
    converted: Path | None  # the `ocr` step's folder

    def roots(self, relative_to: Path) -> dict[str, str]:
        return {name: os.path.relpath(Path(path).absolute(), relative_to.absolute())
                for name, path in (("release", self.release), ("converted", self.converted))
                if path is not None}  # fmt: skip


def write_jsonl(path: Path, rows: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count


def release_problems(root: Path) -> tuple[list[SourceProblem], dict[str, Any], Any]:
    from benchsmith.sources.exams.release import image_relative, read_release

    release = read_release(root)
    problem_file = release.problem_file.name
    problem_sha = sha256_file(release.problem_file)
    version = problem_file.removeprefix("problem_").removesuffix(".json")
    image_sha: dict[str, str] = {}
    problems = []
    for problem_id, record in release.problems.items():
        files = tuple(image_relative(p) for p in record["img_paths"] or [])
        for file in files:
            if file not in image_sha:
                image_sha[file] = sha256_file(root / file)
        problems.append(SourceProblem(problem_id, record, "release", "release", problem_file,
                                      problem_sha, files, tuple(image_sha[f] for f in files),
                                      version))  # fmt: skip
    files = {role: {"file": p.name, "sha256": sha256_file(p)} for role, p in release.files.items()}
    return problems, files, release


def converted_problems(root: Path) -> tuple[list[SourceProblem], dict[str, Any]]:
    path = root / "problems.json"
    if not path.is_file():
        raise BenchsmithError("no problems.json in the converted folder", path=root,
                              fix="run `benchsmith build multi ocr` first")  # fmt: skip
    records = json.loads(path.read_text(encoding="utf-8"))
    origins = json.loads((root / "sources.json").read_text(encoding="utf-8"))
    sha = sha256_file(path)
    problems = []
    for problem_id in sorted(records):
        record, origin = records[problem_id], origins[problem_id]
        raw = {"dataset": "exams", "split": origin["kind"], "id": problem_id,
               "file": origin["file"], "sha256": origin["sha256"], "license": "", "url": ""}  # fmt: skip
        problems.append(SourceProblem(problem_id, record, origin["kind"], "converted",
                                      "problems.json", sha, tuple(record["img_paths"]),
                                      tuple(origin["images"]), "crawled", (raw,),
                                      origin.get("scan_quality")))  # fmt: skip
    files = {
        "problems": {"file": "problems.json", "sha256": sha},
        "sources": {"file": "sources.json", "sha256": sha256_file(root / "sources.json")},
    }
    return problems, files


def converted_report(root: Path | None) -> dict[str, Any]:
    """The OCR step's measurements (engine, pages, CER per variant) for the card."""
    path = Path(root) / "report.json" if root else None
    if path is None or not path.is_file():
        return {}
    report = json.loads(path.read_text(encoding="utf-8"))
    return {**report.get("ocr", {}), "skipped": report.get("skipped", 0)}


def image_fingerprints(rows: list[dict[str, Any]], roots: dict[str, Path]) -> tuple[
        dict[str, int], list[dict[str, Any]]]:  # fmt: skip
    """pHash per image sha256, and the rows whose images do not decode (then removed)."""
    from benchsmith.images.hashes import hash_image

    phash: dict[str, int] = {}
    broken: dict[str, str] = {}
    for row in rows:
        for file, sha in zip(row["image_paths"], row["image_sha256"], strict=False):
            if sha in phash or sha in broken:
                continue
            path = roots[row["source_root"]] / file
            try:
                phash[sha] = hash_image(path.read_bytes(), name=str(path)).phash
            except BenchsmithError as exc:
                broken[sha] = f"{file}: {str(exc).splitlines()[0]}"
    bad = [r for r in rows if any(s in broken for s in r["image_sha256"])]
    for row in bad:
        reason = next(broken[s] for s in row["image_sha256"] if s in broken)
        row["decisions"].append(decision_record("questions", "skipped", "IMAGE_NOT_DECODED",
                                                {"image": reason}))  # fmt: skip
        log(f"multi questions: skipped {row['question_id']}: image does not decode ({reason})")
    return phash, bad


def build_questions(config: MultiConfig, sources: MultiSources, out: str | Path) -> dict[str, Any]:
    """Step ``questions``: every problem of every source as cleaned questions."""
    out = Path(out)
    problems: list[SourceProblem] = []
    files: dict[str, Any] = {}
    release = None
    if sources.release is not None:
        found, files["release"], release = release_problems(Path(sources.release))
        problems += found
    if sources.converted is not None:
        found, files["converted"] = converted_problems(Path(sources.converted))
        problems += found
    if not problems:
        raise BenchsmithError("no MULTI problems: neither a release nor converted pages",
                              fix="pass --release DIR and/or --converted DIR")  # fmt: skip
    rows = []
    for problem in problems:
        try:
            rows += questions_of(problem)
        except ValueError as exc:
            raise BenchsmithError(f"problem {problem.problem_id}: {exc}",
                                  path=problem.file, fix="correct the problem record") from exc  # fmt: skip
    rows = clean_questions(rows, config.cleaning)
    roots = {"release": sources.release, "converted": sources.converted}
    phash, bad = image_fingerprints(rows, {k: Path(v) for k, v in roots.items() if v})
    bad_ids = {r["question_id"] for r in bad}
    rows = [r for r in rows if r["question_id"] not in bad_ids]
    for row in rows:
        row["image_phash"] = [f"{phash[s]:016x}" for s in row["image_sha256"]]
    with atomic_directory(out, inputs=[p for p in roots.values() if p]) as staging:
        count = write_jsonl(staging / "questions.jsonl", rows)
        write_jsonl(staging / "skipped.jsonl", bad)
        info = {
            "family": "multi",
            "step": "questions",
            "builder_version": __version__,
            "config": config.as_dict(),
            "params_hash": params_hash(config.as_dict()),
            "seed": config.seed,
            "roots": sources.roots(out),
            "files": files,
            "counts": {"problems": len(problems), "questions": count, "skipped": len(bad)},
            "source_kinds": {
                kind: sum(p.kind == kind for p in problems) for kind in ("release", "html", "scan")
            },
            "knowledge": len(release.knowledge) if release else 0,
            "ocr": converted_report(sources.converted),
        }
        (staging / "build_info.json").write_text(json.dumps(info, ensure_ascii=False, indent=1,
                                                            sort_keys=True) + "\n")  # fmt: skip
    log(f"multi questions: {count} questions from {len(problems)} problems -> {out}"
        + (f" ({len(bad)} skipped: image does not decode)" if bad else ""))  # fmt: skip
    return info


@dataclass(frozen=True)
class QuestionsDir:
    path: Path
    info: dict[str, Any]
    roots: dict[str, str]

    @classmethod
    def read(cls, path: str | Path, step: str = "questions", roots_override=None) -> QuestionsDir:
        from benchsmith.hf.roots import resolve_roots

        path = Path(path)
        info_path = path / "build_info.json"
        if not info_path.is_file():
            raise BenchsmithError(f"no build_info.json: not a MULTI {step} folder", path=path,
                                  fix=f"run `benchsmith build multi {step}` first")  # fmt: skip
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("family") != "multi" or info.get("step") != step:
            raise BenchsmithError(f"not a MULTI {step} folder (step {info.get('step')!r})",
                                  path=info_path, fix=REBUILD)  # fmt: skip
        return cls(path, info, resolve_roots(info.get("roots"), path, roots_override))

    def rows(self, name: str = "questions.jsonl") -> Iterator[dict[str, Any]]:
        for _, row in read_jsonl(self.path / name, what="MULTI questions", fix=REBUILD):
            yield row

    @property
    def config(self) -> MultiConfig:
        return config_from_dict(self.info["config"])

    def fingerprint(self) -> str:
        files = sorted(p.name for p in self.path.iterdir() if p.is_file())
        return params_hash({f: sha256_file(self.path / f) for f in files})


def select_questions(
    questions_dir: str | Path, config: MultiConfig, out: str | Path,
    roots_override: dict[str, str] | None = None, recorded_elite: list[str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Step ``select``: near duplicates, Appendix D, Elite and Extend (``recorded_elite``: the
    hard list a published build used, for the audit's re-run)."""
    from benchsmith.builders.multi.elite import elite_ids
    from benchsmith.builders.multi.extend import extend_rows
    from benchsmith.builders.multi.near_dups import remove_near_duplicates
    from benchsmith.builders.multi.selection import select_problems

    source = QuestionsDir.read(questions_dir, roots_override=roots_override)
    out = Path(out)
    rows = list(source.rows())
    hashes = [[int(h, 16) for h in r["image_phash"]] for r in rows]
    rows, removed, duplicates = remove_near_duplicates(rows, hashes, config.near_duplicates)
    pool_kinds = {"all": None, "crawled": {"html", "scan"}, "none": set()}[
        config.selection.apply_to
    ]
    problems = problem_records(source, rows, pool_kinds)
    kept, dropped, selection = select_problems(problems, config.selection, config.seed)
    selected = []
    for row in rows:
        if row["problem_id"] in dropped:
            removed.append({**row, "decisions": [*row["decisions"], dropped[row["problem_id"]]]})
        else:
            selected.append(row)
    release_root = Path(source.roots["release"]) if "release" in source.roots else None
    elite, elite_info = elite_ids(config.elite, release_root, {r["question_id"] for r in selected},
                                  base=Path.cwd(), recorded=recorded_elite)  # fmt: skip
    for row in selected:
        row["in_elite"] = row["question_id"] in elite
    extend = extend_rows(release_root, selected) if release_root else []
    with atomic_directory(out, inputs=[source.path]) as staging:
        count = write_jsonl(staging / "questions.jsonl", selected)
        write_jsonl(staging / "removed.jsonl", removed)
        write_jsonl(staging / "extend.jsonl", extend)
        info = {
            **source.info,
            "step": "select",
            "config": config.as_dict(),
            "params_hash": params_hash(config.as_dict()),
            "seed": config.seed,
            "roots": {**{k: os.path.relpath(Path(v).absolute(), out.absolute())
                         for k, v in source.roots.items()}},
            "questions_fingerprint": source.fingerprint(),
            "counts": {**source.info["counts"], "selected": count, "removed": len(removed),
                       "elite": sum(r["in_elite"] for r in selected), "extend": len(extend)},
            "near_duplicates": duplicates,
            "selection": selection,
            "elite": elite_info,
        }  # fmt: skip
        (staging / "build_info.json").write_text(json.dumps(info, ensure_ascii=False, indent=1,
                                                            sort_keys=True) + "\n")  # fmt: skip
    log(f"multi select: {count} questions kept, {duplicates['removed']} near duplicates and "
        f"{selection['dropped']} unselected problems removed, {info['counts']['elite']} Elite "
        f"-> {out}")  # fmt: skip
    return info


def problem_records(source: QuestionsDir, rows: list[dict[str, Any]],
                    kinds: set[str] | None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The problem records (as the selection reads them) of the rows in the pool."""
    records: dict[str, dict[str, Any]] = {}
    for row in rows:
        if kinds is not None and row["source_kind"] not in kinds:
            continue
        record = records.setdefault(row["problem_id"], {
            "problem_content": row["problem_content"], "problem_content_list": [],
            "problem_answer_list": [], "problem_analysis_list": [],
            "knowledge": row["knowledge"]})  # fmt: skip
        record["problem_content_list"].append(row["question_content"])
        record["problem_answer_list"].append(row["answer"] or "")
        record["problem_analysis_list"].append(row["analysis"])
    return records
