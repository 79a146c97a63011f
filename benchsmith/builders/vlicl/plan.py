"""Build the VL-ICL build directory (contract: ``notes/vlicl_plan_format.md``).

::

    BUILD/build_info.json
    BUILD/tasks/<task>/support.jsonl   one row per line, sorted by id
    BUILD/tasks/<task>/query.jsonl
    BUILD/episodes.jsonl               sorted (task, sampler, seed, n_shot, query_id)
    BUILD/rendered/<task>/<name>.png   operator images (rebuild mode)

Source images stay in their folders (publish embeds them). The folder appears as a whole
(:func:`atomic_directory`), and the same sources + params give byte-identical files: rows are
written as canonical JSON and every draw comes from a generator keyed by what it draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.builders.vlicl import FAMILY, SPLITS, ImageHashes, TaskRows
from benchsmith.builders.vlicl.clevr_count import build_clevr
from benchsmith.builders.vlicl.config import OPERATOR_TASKS, RELEASE_TASKS, VliclConfig
from benchsmith.builders.vlicl.episodes import SAMPLER_VERSIONS, build_episodes
from benchsmith.builders.vlicl.ingest import ingest_task
from benchsmith.builders.vlicl.matching_mi import build_matching_mi
from benchsmith.builders.vlicl.open_mi import build_open_mi
from benchsmith.builders.vlicl.open_t2i_mi import build_open_t2i_mi
from benchsmith.builders.vlicl.operator_images import load_operator_font
from benchsmith.builders.vlicl.operators import build_operator_task
from benchsmith.builders.vlicl.text_variants import (
    TEXT_VARIANTS,
    describer,
    image_task,
    text_variant_rows,
    twin_episodes,
)
from benchsmith.builders.vlicl.textocr import build_textocr
from benchsmith.core.atomic import atomic_directory, atomic_write_json, atomic_write_text
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import canonical_json, params_hash, sha256_bytes, sha256_file
from benchsmith.core.progress import log
from benchsmith.sources.clevr.reader import read_clevr_scenes, scenes_path
from benchsmith.sources.miniimagenet.reader import MiniImageNet, read_miniimagenet
from benchsmith.sources.textocr.reader import annotations_path, read_textocr

MINI_TASKS = ("open_mi", "matching_mi", "open_t2i_mi")
UPSTREAM = {"repo": "ys-zong/VL-ICL", "repo_commit": "2b77eee", "hf_dataset": "ys-zong/VL-ICL"}


@dataclass(frozen=True)
class VliclSources:
    """Where the raw sources are; only those the selected tasks and mode need must be set."""

    miniimagenet: Path | None = None  # Ravi-layout root (train/val/test.csv + images/)
    clevr: Path | None = None  # the CLEVR_v1.0 folder
    font: Path | None = None  # TTF for operator images; None = Pillow's embedded font
    ingest: Path | None = None  # VL-ICL release root (<task>/query.json ...), ingest mode
    ingest_images: Path | None = None  # where zips are extracted; None = the release root
    textocr: Path | None = None  # the TextOCR folder (annotations + train_images/)

    def ingest_image_root(self) -> Path | None:
        return self.ingest_images if self.ingest_images is not None else self.ingest


@dataclass
class BuildSummary:
    out_dir: Path
    mode: str
    counts: dict[str, dict[str, int]]
    episodes: int
    stats: dict[str, Any] = field(default_factory=dict)
    choices: list[str] = field(default_factory=list)


def _need(path: Path | None, what: str, flag: str) -> Path:
    if path is None:
        raise BenchsmithError(
            f"the VL-ICL build needs {what}", fix=f"pass {flag} (or set it in params.yaml)"
        )
    return Path(path)


def _rebuild_tasks(
    config: VliclConfig, sources: VliclSources, staging: Path, hashes: ImageHashes, digest: dict
) -> tuple[dict[str, TaskRows], dict[str, Any] | None]:
    sizes, seed = config.sizes, config.seed
    rows: dict[str, TaskRows] = {}
    font_info = None
    mini: MiniImageNet | None = None
    if any(t in config.tasks for t in MINI_TASKS):
        root = _need(sources.miniimagenet, "a MiniImageNet folder (Ravi split)", "--miniimagenet")
        mini = read_miniimagenet(root)
        digest["miniimagenet"] = {
            "layout": mini.layout,
            "csv_sha256": dict(sorted(mini.csv_sha256.items())),
        }
    if "open_mi" in config.tasks:
        log("vlicl: open_mi episodes")
        rows["open_mi"] = build_open_mi(
            mini,  # type: ignore[arg-type]
            episodes=sizes.open_mi_episodes,
            ways=sizes.open_mi_ways,
            shots=sizes.open_mi_shots,
            words=config.words,
            seed=seed,
            hashes=hashes,
        )
    if "open_t2i_mi" in config.tasks:
        log("vlicl: open_t2i_mi episodes")
        rows["open_t2i_mi"] = build_open_t2i_mi(
            mini,  # type: ignore[arg-type]
            episodes=sizes.open_t2i_mi_episodes,
            ways=sizes.open_mi_ways,
            shots=sizes.open_mi_shots,
            words=config.words,
            seed=seed,
            hashes=hashes,
        )
    if "matching_mi" in config.tasks:
        log("vlicl: matching_mi pairs")
        open_mi_queries = (
            frozenset(ref["sha256"] for row in rows["open_mi"].query for ref in row["images"])
            if "open_mi" in rows
            else frozenset()
        )
        rows["matching_mi"] = build_matching_mi(
            mini,  # type: ignore[arg-type]
            support_pairs=sizes.matching_support_pairs,
            query_pairs=sizes.matching_query_pairs,
            seed=seed,
            hashes=hashes,
            exclude_sha256=open_mi_queries,
        )
    clevr_scenes: dict | None = None
    if "clevr" in config.tasks:
        log("vlicl: clevr questions")
        root = _need(sources.clevr, "the CLEVR_v1.0 folder", "--clevr")
        scenes = {split: read_clevr_scenes(root, split) for split in ("train", "val")}
        scenes_sha = {split: sha256_file(scenes_path(root, split)) for split in scenes}
        digest["clevr"] = {"scenes_sha256": scenes_sha}
        clevr_scenes = scenes
        rows["clevr"] = build_clevr(
            scenes["train"],
            scenes["val"],
            n_support=sizes.clevr_support,
            n_query=sizes.clevr_query,
            seed=seed,
            root=root,
            hashes=hashes,
            scenes_sha256=scenes_sha,
        )
    if "textocr" in config.tasks:
        log("vlicl: textocr boxed words")
        root = _need(sources.textocr, "the TextOCR folder", "--textocr")
        images = {split: read_textocr(root, split) for split in ("train", "val")}
        words_sha = {split: sha256_file(annotations_path(root, split)) for split in images}
        digest["textocr"] = {"annotations_sha256": words_sha}
        rows["textocr"] = build_textocr(
            images["train"],
            images["val"],
            n_support=sizes.textocr_support,
            n_query=sizes.textocr_query,
            seed=seed,
            root=root,
            hashes=hashes,
            annotations_sha256=words_sha,
            rendered_dir=staging / "rendered",
        )
    operator_tasks = [t for t in config.tasks if t in OPERATOR_TASKS]
    if operator_tasks:
        font, info = load_operator_font(sources.font)
        font_info = {"name": info.name, "sha256": info.sha256, "source": info.source}
        for task in operator_tasks:
            log(f"vlicl: {task} images")
            rows[task] = build_operator_task(
                task,
                n_support=sizes.operator_support,
                n_query_per_operator=sizes.operator_query_per_operator,
                seed=seed,
                font=font,
                font_source=info.source,
                rendered_dir=staging / "rendered",
            )
    for variant in (t for t in config.tasks if t in TEXT_VARIANTS):
        base = image_task(variant)
        rows[variant] = text_variant_rows(variant, rows[base], describer(base, clevr_scenes))
    from_release = [t for t in config.tasks if t in RELEASE_TASKS]
    if from_release:  # no raw source of ours makes them: read beside the rebuilt tasks
        if sources.ingest is None:
            raise BenchsmithError(
                f"{from_release} come from the VL-ICL release only (their images are not among "
                "benchsmith's sources), and no release folder is set",
                fix="set vlicl.sources.ingest_dir in params.yaml (or pass --ingest-dir) to the "
                "release root holding <task>/query.json, or leave them out of vlicl.tasks",
            )
        rows.update(_ingest_tasks(replace(config, tasks=tuple(from_release)), sources, hashes,
                                  digest))  # fmt: skip
    return rows, font_info


def _ingest_tasks(
    config: VliclConfig, sources: VliclSources, hashes: ImageHashes, digest: dict
) -> dict[str, TaskRows]:
    root = _need(sources.ingest, "the VL-ICL release folder", "--ingest-root")
    rows = {}
    for task in config.tasks:
        log(f"vlicl: ingest {task}")
        rows[task] = ingest_task(root, task, hashes, images_root=sources.ingest_image_root())
        digest.setdefault("ingest", {})[task] = {
            name: sha256_file(root / task / name)
            for name in ("query.json", "support.json", "query.zip", "support.zip")
            if (root / task / name).is_file()
        }
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(canonical_json(row) + "\n" for row in rows))


def _ingested_t2i_choices(ingested: tuple[str, ...]) -> list[str]:
    """What ingest decides for the text-to-image tasks it reads."""
    out = []
    two_way = [t for t in ("open_t2i_mi", "fast_count_t2i", "fast_attr_t2i") if t in ingested]
    if two_way:
        out.append(
            f"{', '.join(two_way)}: support rows are the 2-way episodes stored inside each "
            "query (images per class, with the fast tasks' captions as demo prompts); the "
            "query's own image, when the release has one, is named in provenance, never "
            "shown; its answer is what a judge looks for."
        )
    if "cobsat" in ingested:
        out.append(
            "cobsat: rows keep the release's scenario (task, latent field and value), object, "
            "attribute and two-value answer [latent, non-latent]; episodes draw demonstrations "
            "from the query's scenario only, as the original's select_demonstration does."
        )
    return out


def choices(config: VliclConfig) -> list[str]:
    """Every decision the original release leaves open, in plain words, for the card."""
    s = config.sizes
    if config.mode == "ingest":
        out = [
            "Support and query rows are read from the official VL-ICL release JSON in file order; "
            "images come from its zips (image files only, nothing unpickled).",
            "open_mi support rows are the 5-way episodes stored inside each query; the separate "
            "open_mi support.json is not used.",
            "Fields the release does not store (matching class names, CLEVR scene for unusual "
            "file names, operator operands that cannot be recovered) are empty or -1 and counted.",
        ]
        out += _ingested_t2i_choices(config.tasks)
    else:
        out = [
            f"open_mi: {s.open_mi_episodes} episodes from the Ravi-Larochelle test.csv classes; "
            f"each has {s.open_mi_ways} classes, {s.open_mi_ways} distinct nonsense words drawn "
            f"without replacement from a fixed list of {len(config.words)}, {s.open_mi_shots} "
            "support images per class and 1 query image.",
            "open_mi: query classes are balanced over the test classes (seeded permutation per "
            "cycle of episodes); query images are reserved first, and no support image of the "
            "task has the same sha256 as any query image.",
            "matching_mi: support pairs from train.csv classes, query pairs from test.csv "
            "classes (disjoint); each group is one same-class and one different-class pair, so "
            "both splits are exactly 50% Yes; images used as open_mi queries are not used.",
            "clevr: support from CLEVR v1.0 train scenes, query from val scenes, drawn without "
            "replacement; attribute uniform over size/color/material/shape; value uniform over "
            "the values present in the scene, so every count is at least 1; the answer is "
            "recounted from the scene JSON.",
            f"operators: digits 0-9; {s.operator_support} support expressions (distinct while "
            f"possible), {s.operator_query_per_operator} queries per operator (+, -, x) "
            "interleaved, preferring expressions not used in support; negative answers are kept.",
            "operators: images are rendered with a pinned font (see build_info font) on a "
            "256x256 white canvas; the interleaved task shows one digit per image.",
        ]
        from_release = tuple(t for t in config.tasks if t in RELEASE_TASKS)
        if from_release:
            out.append(
                f"{', '.join(from_release)}: read from the official VL-ICL release (its JSON in "
                "file order, images from its zips), since their sources are not benchsmith's."
            )
            out += _ingested_t2i_choices(from_release)
        if "textocr" in config.tasks:
            out.append(
                f"textocr: {s.textocr_support} support images from TextOCR train, "
                f"{s.textocr_query} queries from TextOCR val (disjoint Open Images), drawn "
                "without replacement among images with a usable word; the word is the largest "
                "box among words that are legible (not '.'), axis-aligned (the polygon fills at "
                "least 90% of its box) and inside the image; a red box (255, 0, 0) is drawn "
                "just outside it and the image saved as JPEG (quality 95, 4:4:4)."
            )
    out += [
        f"Episodes: shot lists {', '.join(f'{t} {list(config.task_shots(t))}' for t in config.tasks)}; "
        f"seeds {list(config.episode_seeds)}.",
        "Episodes, hashed sampler: one generator per (seed, task, shots, query id), so episodes do "
        "not depend on order; operator demos never show the query's own expression.",
        "Episodes, legacy sampler: replays the original code's Python random stream (seed once, "
        "shots in list order, queries in file order); operator episodes showing the query's "
        "own expression are kept and counted.",
        "open_mi episodes are 2-way: the distractor class and the class order are drawn per "
        "query, and shot i uses the i-th stored image of each class, interleaved A, B, A, B.",
    ]
    if "open_t2i_mi" in config.tasks and config.mode == "rebuild":
        out.append(
            f"open_t2i_mi: {s.open_t2i_mi_episodes} episodes drawn as open_mi's (its own draws): "
            "demonstrations are ('Generate a <word>', an image of the class), the query is "
            "'Generate a <word>' with no image, and its answer is the class's name for a judge "
            "(ImageNet's first name of the wnid; LOC_synset_mapping.txt in the MiniImageNet "
            "root names other classes). Episodes are 2-way like open_mi's."
        )
    return out


def build_vlicl(config: VliclConfig, sources: VliclSources, out_dir: str | Path) -> BuildSummary:
    """Build every selected task and its episodes into ``out_dir`` (replaced as a whole)."""
    out_dir = Path(out_dir)
    hashes = ImageHashes()
    digest: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    episode_rows: list[dict[str, Any]] = []
    inputs = [
        p
        for p in (
            sources.miniimagenet,
            sources.clevr,
            sources.textocr,
            sources.font,
            sources.ingest,
        )
        if p
    ]
    with atomic_directory(out_dir, inputs=inputs) as staging:
        font_info = None
        if config.mode == "ingest":
            rows = _ingest_tasks(config, sources, hashes, digest)
        else:
            rows, font_info = _rebuild_tasks(config, sources, staging, hashes, digest)
        by_task: dict[str, list[dict[str, Any]]] = {}
        image_first = sorted(config.tasks, key=lambda t: t in TEXT_VARIANTS)
        for task in image_first:
            task_rows = rows[task]
            for split in SPLITS:
                ordered = sorted(getattr(task_rows, split), key=lambda r: r["id"])
                _write_jsonl(staging / "tasks" / task / f"{split}.jsonl", ordered)
            if task in TEXT_VARIANTS:  # the image task's demonstrations, ids mapped
                episodes = twin_episodes(task, by_task[image_task(task)])
                episode_stats = {"episodes": len(episodes)}
            else:
                episodes, episode_stats = build_episodes(
                    task,
                    task_rows.support,
                    task_rows.query,
                    shots=config.task_shots(task),
                    seeds=config.episode_seeds,
                    samplers=config.samplers,
                )
            by_task[task] = episodes
            episode_rows += episodes
            # which zips this run extracted depends on what an earlier run left, not on the
            # inputs: logged, never recorded (the build must re-derive byte for byte)
            row_stats = {k: v for k, v in task_rows.stats.items() if k != "extracted_zips"}
            if task_rows.stats.get("extracted_zips"):
                log(f"vlicl: {task}: extracted {', '.join(task_rows.stats['extracted_zips'])}")
            stats[task] = {**row_stats, **episode_stats}
        episode_rows.sort(
            key=lambda r: (r["task"], r["sampler"], r["seed"], r["n_shot"], r["query_id"])
        )
        _write_jsonl(staging / "episodes.jsonl", episode_rows)
        refs = sorted(
            {
                (ref["root"], ref["file"], ref["sha256"])
                for t in rows.values()
                for split in (t.support, t.query)
                for r in split
                for ref in r["images"]
            }
        )
        digest["images_sha256"] = sha256_bytes(canonical_json(refs).encode("utf-8"))
        counts = {
            t: {"support": len(rows[t].support), "query": len(rows[t].query)} for t in config.tasks
        }
        info = {
            "family": FAMILY,
            "mode": config.mode,
            "builder_version": __version__,
            "params": config.to_dict(),
            "params_hash": params_hash(config.to_dict()),
            "seed": config.seed,
            "roots": {
                # ingest reads the release only: a raw source it never opened is no root of it
                "miniimagenet": str(sources.miniimagenet)
                if sources.miniimagenet and config.mode == "rebuild"
                else None,
                "clevr": str(sources.clevr) if sources.clevr and config.mode == "rebuild" else None,
                "textocr": str(sources.textocr)
                if sources.textocr and config.mode == "rebuild" and "textocr" in config.tasks
                else None,
                "rendered": "rendered",
                "ingest": str(sources.ingest_image_root())
                if sources.ingest
                and (config.mode == "ingest" or any(t in RELEASE_TASKS for t in config.tasks))
                else None,
            },
            "font": font_info,
            "sources_digest": {
                **digest,
                "upstream": UPSTREAM,
                "samplers": {s: SAMPLER_VERSIONS[s] for s in config.samplers},
            },
            "counts": counts,
            "choices": choices(config),
            "stats": stats,
        }
        atomic_write_json(staging / "build_info.json", info)
    log(
        f"vlicl: wrote {out_dir} ({sum(c['query'] for c in counts.values())} queries, {len(episode_rows)} episodes)"
    )
    return BuildSummary(out_dir, config.mode, counts, len(episode_rows), stats, info["choices"])
