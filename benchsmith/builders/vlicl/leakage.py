"""VL-ICL leakage stage: does a query's answer show up among the support items of its task?

Reads a build directory (``notes/vlicl_plan_format.md``, through :class:`VliclBuildDir` of
:mod:`.build_dir`, the reader publish shares) and writes ``leakage.json``. Checks, per task:

* **Images** (open_mi, matching_mi, clevr): every support and query image is hashed (pixel
  sha256 + 64-bit pHash, :mod:`benchsmith.images.hashes`); a query image whose pixels
  equal a support image's is an *exact* duplicate, one within ``threshold`` bits of pHash
  Hamming distance a *near* duplicate (:func:`duplicates_across`). Default threshold 4 of 64
  bits, stricter than the stage's generic 8: here a finding *removes* a query, and support and
  query of a task come from the same classes (look-alike pictures sit closer than random
  hashes), while a re-encode, resize or mild colour change of one picture stays within 4 bits
  in most cases. Set ``vlicl.leakage.image_threshold`` to trade recall for removals.
* **Rendered operator tasks** compare the whole ordered image sequence of a row by pixel
  sha256 only. A render is a deterministic function of the expression, so equal sequences are
  equal expressions; pHash on renders of *different* expressions is meaningless ("3 ? 5" and
  "3 ? 6" are <= 4 bits apart for 105 of the 4,950 pairs, 3 pairs at 0 bits), and the
  interleaved task shows one digit per image, so single operand images are shared by design.
* **Classes**: matching_mi's support and query classes (``class_a``/``class_b``) must be
  disjoint; open_mi's are reported (an episode's query class is one of its support classes by
  construction, so overlap there is expected).
* **Expressions** (operators): (a, b) pairs shared by support and query, and how many episodes
  per sampler show the query's own expression among its demos (``hashed`` avoids them by
  construction, ``legacy`` replays the original and only counts them).
* **Cross-task** (reported only): matching_mi images that duplicate an open_mi query image.

Policy: a *query* row that shares an image (exact or near) or a class with the support split
of its task is listed in ``removed``; publish drops it and the episodes asking it, and the
card says so. The query is removed rather than the support item because support items serve
every episode, so dropping one would change the demonstrations of unrelated queries.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl import SPLITS
from benchsmith.builders.vlicl.build_dir import VliclBuildDir, restore_fix
from benchsmith.builders.vlicl.build_dir import resolve_roots as resolve_roots  # re-export
from benchsmith.builders.vlicl.config import DEFAULT_IMAGE_THRESHOLD, OPERATOR_TASKS
from benchsmith.builders.vlicl.text_variants import twin_removals
from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.progress import log
from benchsmith.images.duplicates import duplicates_across
from benchsmith.images.hashes import ImageHashes, hash_images

LEAKAGE_FORMAT = 1
RENDERED_TASKS = OPERATOR_TASKS  # their images are renders, compared as whole sequences
DISJOINT_CLASS_TASKS = ("matching_mi",)

Key = tuple[str, str]  # (root, file) of an ImageRef


# ---- the checks ----------------------------------------------------------------------------


@dataclass
class TaskRowsLite:
    """What the checks need of one split: image refs and the extras, by row id."""

    images: dict[str, list[Key]]
    extras: dict[str, dict[str, Any]]

    @classmethod
    def load(cls, build: VliclBuildDir, task: str, split: str, refs: dict[Key, dict]):
        images, extras = {}, {}
        for row in build.rows(task, split):
            keys = []
            for ref in row["images"]:
                key = (ref["root"], ref["file"])
                refs.setdefault(key, ref)
                keys.append(key)
            images[row["id"]] = keys
            extras[row["id"]] = row.get("extras") or {}
        return cls(images, extras)


def hash_all(
    build: VliclBuildDir, refs: dict[Key, dict], workers: int, executor: str = "local"
) -> dict[Key, ImageHashes]:
    """Pixel sha256 + pHash of every referenced image (each file read once, sha256-checked).

    Files are read lazily as the hasher consumes them, so memory holds one batch of encoded
    images, not the dataset.
    """
    keys = sorted(refs)
    items = ((key, build.read_image(refs[key])) for key in keys)
    hashes, errors = hash_images(items, workers=workers, total=len(keys), executor=executor)
    if errors:
        key, message = next(iter(errors.items()))
        raise SourceError(
            f"{len(errors)} image(s) cannot be decoded, first: {message}",
            path=build.image_path(refs[key]),
            fix=restore_fix(refs[key]),
        )
    return hashes


def _users(rows: TaskRowsLite) -> dict[Key, list[str]]:
    users: dict[Key, list[str]] = defaultdict(list)
    for row_id, keys in rows.images.items():
        for key in dict.fromkeys(keys):
            users[key].append(row_id)
    return users


def image_findings(
    query: TaskRowsLite, support: TaskRowsLite, hashes: dict[Key, ImageHashes], threshold: int
) -> tuple[list[dict], list[dict]]:
    """(exact, near) query-vs-support image duplicates, with the row ids on each side."""
    q_users, s_users = _users(query), _users(support)
    # keys tagged by split: one file used on both sides is still two distinct items
    found = duplicates_across(
        {("query", *k): hashes[k] for k in q_users},
        {("support", *k): hashes[k] for k in s_users},
        threshold,
    )
    exact, near = [], []
    for f in found:
        q_key, s_key = tuple(f.a[1:]), tuple(f.b[1:])
        entry = {
            "query_image": "/".join(q_key),
            "support_image": "/".join(s_key),
            "distance": int(f.distance),
            "query_ids": q_users[q_key],
            "support_ids": s_users[s_key],
        }
        (exact if f.kind == "exact" else near).append(entry)
    order = lambda e: (e["query_image"], e["support_image"])  # noqa: E731
    return sorted(exact, key=order), sorted(near, key=order)


def sequence_findings(
    query: TaskRowsLite, support: TaskRowsLite, hashes: dict[Key, ImageHashes]
) -> list[dict]:
    """Query rows whose whole ordered image sequence has the pixels of a support row's."""
    by_sequence: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for row_id, keys in support.images.items():
        by_sequence[tuple(hashes[k].pixel_sha256 for k in keys)].append(row_id)
    out = []
    for row_id, keys in query.images.items():
        match = by_sequence.get(tuple(hashes[k].pixel_sha256 for k in keys))
        if match:
            out.append(
                {
                    "query_image": " + ".join("/".join(k) for k in keys),
                    "support_image": " + ".join("/".join(k) for k in support.images[match[0]]),
                    "distance": 0,
                    "query_ids": [row_id],
                    "support_ids": match,
                }
            )
    return out


def class_overlap(task: str, query: TaskRowsLite, support: TaskRowsLite) -> dict[str, Any]:
    fields = ("class_a", "class_b") if task == "matching_mi" else ("real_label",)

    def classes(rows: TaskRowsLite) -> set[str]:
        return {str(e[f]) for e in rows.extras.values() for f in fields if e.get(f)}

    shared = sorted(classes(query) & classes(support))
    must = task in DISJOINT_CLASS_TASKS
    leaking = sorted(
        row_id
        for row_id, e in query.extras.items()
        if must and any(str(e.get(f)) in shared for f in fields)
    )
    return {
        "must_be_disjoint": must,
        "support_classes": len(classes(support)),
        "query_classes": len(classes(query)),
        "shared": shared,
        "query_ids": leaking,
    }


def _expression(extras: Mapping[str, Any]) -> tuple[int, int] | None:
    a, b = extras.get("a"), extras.get("b")
    return None if a is None or b is None or a < 0 or b < 0 else (int(a), int(b))


def expression_overlap(query: TaskRowsLite, support: TaskRowsLite) -> dict[str, Any]:
    support_expr = {_expression(e) for e in support.extras.values()} - {None}
    query_expr = {i: _expression(e) for i, e in query.extras.items()}
    shared = sorted({x for x in query_expr.values() if x in support_expr})  # type: ignore[misc]
    return {
        "shared_expressions": [list(x) for x in shared],
        "queries_with_support_expression": sorted(
            i for i, x in query_expr.items() if x in support_expr
        ),
        "unknown_expressions": sum(1 for x in query_expr.values() if x is None),
    }


def revealing_episodes(
    build: VliclBuildDir, rows: dict[str, dict[str, TaskRowsLite]]
) -> dict[str, dict[str, Any]]:
    """Per operator task and sampler: episodes whose demos show the query's own (a, b)."""
    out: dict[str, dict[str, Any]] = {}
    for episode in build.episodes():
        task = episode["task"]
        if task not in RENDERED_TASKS or task not in rows:
            continue
        counts = out.setdefault(task, {"episodes": Counter(), "revealing": Counter(), "ids": []})
        sampler = episode["sampler"]
        counts["episodes"][sampler] += 1
        target = _expression(rows[task]["query"].extras.get(episode["query_id"], {}))
        support = rows[task]["support"].extras
        if target is not None and any(
            _expression(support.get(d, {})) == target for d in episode["demo_ids"]
        ):
            counts["revealing"][sampler] += 1
            if len(counts["ids"]) < 20:
                counts["ids"].append(
                    f"{sampler}/seed{episode['seed']}/{episode['n_shot']}-shot/{episode['query_id']}"
                )
    return {
        t: {
            "episodes": dict(sorted(c["episodes"].items())),
            "revealing": {s: c["revealing"][s] for s in sorted(c["episodes"])},
            "examples": c["ids"],
        }
        for t, c in out.items()
    }


def check_task(
    task: str,
    rows: dict[str, TaskRowsLite],
    hashes: dict[Key, ImageHashes],
    threshold: int,
    episodes: dict[str, Any] | None,
) -> dict[str, Any]:
    query, support = rows["query"], rows["support"]
    if task in RENDERED_TASKS:
        exact, near = sequence_findings(query, support, hashes), []
        policy = "exact image sequence (pixel sha256); renders compared exactly"
    else:
        exact, near = image_findings(query, support, hashes, threshold)
        policy = f"any image, exact (pixel sha256) or near (pHash distance <= {threshold})"
    classes = class_overlap(task, query, support) if task in ("open_mi", "matching_mi") else None
    reasons: dict[str, set[str]] = defaultdict(set)
    for kind, findings in (("EXACT_DUPLICATE_IMAGE", exact), ("NEAR_DUPLICATE_IMAGE", near)):
        for finding in findings:
            for row_id in finding["query_ids"]:
                reasons[row_id].add(f"{kind}_IN_SUPPORT")
    for row_id in (classes or {}).get("query_ids", []):
        reasons[row_id].add("CLASS_IN_SUPPORT")
    report: dict[str, Any] = {
        "image_policy": policy,
        "images": {s: len({k for ks in rows[s].images.values() for k in ks}) for s in SPLITS},
        "exact_support_query": exact,
        "near_support_query": near,
        "class_overlap": classes["shared"] if classes and classes["must_be_disjoint"] else [],
        "classes": classes,
        "expression_overlap": None,
        "removed": sorted(reasons),
        "removal_reasons": {i: sorted(r) for i, r in sorted(reasons.items())},
    }
    if task in RENDERED_TASKS:
        report["expression_overlap"] = {
            **expression_overlap(query, support),
            **(episodes or {"episodes": {}, "revealing": {}, "examples": []}),
        }
    return report


def cross_task(
    rows: dict[str, dict[str, TaskRowsLite]], hashes: dict[Key, ImageHashes], threshold: int
) -> list[dict]:
    """matching_mi images (either split) that duplicate an open_mi query image: reported only."""
    if "open_mi" not in rows or "matching_mi" not in rows:
        return []
    queries = {k for ks in rows["open_mi"]["query"].images.values() for k in ks}
    matching = {k for s in SPLITS for ks in rows["matching_mi"][s].images.values() for k in ks}
    found = duplicates_across(
        {k: hashes[k] for k in matching}, {k: hashes[k] for k in queries}, threshold
    )
    return sorted(
        (
            {
                "matching_mi_image": "/".join(f.a),
                "open_mi_query_image": "/".join(f.b),
                "kind": f.kind,
                "distance": int(f.distance),
            }
            for f in found
        ),
        key=lambda e: (e["matching_mi_image"], e["open_mi_query_image"]),
    )


def remove_image_twins(tasks: dict[str, dict[str, Any]]) -> None:
    """A text variant loses every query whose image twin was removed: it is the same item
    (same answer, same demonstrations), only shown in words."""
    removed = {t: report["removed"] for t, report in tasks.items()}
    for variant, twins in twin_removals(removed, list(tasks)).items():
        reasons = {i: set(r) for i, r in tasks[variant]["removal_reasons"].items()}
        for query_id in twins:
            reasons.setdefault(query_id, set()).add("IMAGE_TWIN_REMOVED")
        tasks[variant]["removed"] = sorted(reasons)
        tasks[variant]["removal_reasons"] = {i: sorted(r) for i, r in sorted(reasons.items())}


def summarise(tasks: dict[str, dict[str, Any]], cross: list[dict]) -> dict[str, Any]:
    revealing: Counter = Counter()
    for report in tasks.values():
        revealing.update((report["expression_overlap"] or {}).get("revealing", {}))
    return {
        "removed_queries": sum(len(r["removed"]) for r in tasks.values()),
        "removed_by_task": {t: len(r["removed"]) for t, r in tasks.items()},
        "exact_pairs": sum(len(r["exact_support_query"]) for r in tasks.values()),
        "near_pairs": sum(len(r["near_support_query"]) for r in tasks.values()),
        "shared_classes": sum(len(r["class_overlap"]) for r in tasks.values()),
        "revealing_episodes": dict(sorted(revealing.items())),
        "cross_task_duplicates": len(cross),
    }


def check_vlicl_leakage(
    build_dir: str | Path,
    threshold: int = DEFAULT_IMAGE_THRESHOLD,
    *,
    out_path: str | Path | None = None,
    workers: int = 1,
    executor: str = "local",
    roots_override: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run every check over ``build_dir`` and write ``leakage.json`` (default next to it,
    where the pipeline keeps it)."""
    if not 0 <= int(threshold) <= 64:
        raise BenchsmithError(
            f"image threshold must be 0..64 bits, got {threshold}",
            fix="set vlicl.leakage.image_threshold in params.yaml",
        )
    build = VliclBuildDir.read(build_dir, roots_override)
    refs: dict[Key, dict] = {}
    rows = {t: {s: TaskRowsLite.load(build, t, s, refs) for s in SPLITS} for t in build.tasks}
    log(f"vlicl leakage: hashing {len(refs)} images of {len(rows)} tasks")
    hashes = hash_all(build, refs, workers, executor)
    episodes = revealing_episodes(build, rows)
    tasks = {t: check_task(t, rows[t], hashes, threshold, episodes.get(t)) for t in rows}
    remove_image_twins(tasks)
    cross = cross_task(rows, hashes, threshold)
    report = {
        "format": LEAKAGE_FORMAT,
        "build_fingerprint": build.fingerprint(),
        "image_threshold": int(threshold),
        "images_hashed": len(refs),
        "hash": "pixel sha256 of the decoded RGB pixels + 64-bit pHash (imagehash)",
        "tasks": tasks,
        "cross_task": {"matching_mi_vs_open_mi_query": cross},
        "summary": summarise(tasks, cross),
    }
    out = Path(out_path) if out_path else build.path.parent / "leakage.json"
    atomic_write_json(out, report)
    return report
