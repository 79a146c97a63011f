"""Ingest of the release's text-to-image tasks: CoBSAT, and the 2-way episode tasks
(``open_t2i_mi``, ``fast_count_t2i``, ``fast_attr_t2i``).

Why apart from :mod:`.ingest`: these rows answer with an image, so what a query carries is
different (a prompt and what a judge looks for, never an image the model is shown), and the
2-way tasks store their demonstrations inside each query, as the original's
``select_demonstration`` reads them (``query['support'][key]['images'][i]``, with the demo
prompt built from the key or the stored caption).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchsmith.builders.vlicl import make_row
from benchsmith.builders.vlicl.ingest_images import RELEASE_FIX, ReleaseImages, as_list
from benchsmith.core.errors import SourceError

T2I_EPISODE_TASKS = ("open_t2i_mi", "fast_count_t2i", "fast_attr_t2i")


def _entry_id(entry: dict, k: int) -> str:
    return str(entry.get("id", k))


def demo_prompt(task: str, key: str, caption: str | None) -> str:
    """The original's demonstration prompt per task (``ICL_utils.select_demonstration``):
    ``open_t2i_mi`` "Generate a {key}", ``fast_attr_t2i`` "Generate a {caption}",
    ``fast_count_t2i`` "Generate {caption}" (a count reads "Generate two dogs")."""
    if task == "open_t2i_mi":
        return f"Generate a {key}"
    return f"Generate a {caption}" if task == "fast_attr_t2i" else f"Generate {caption}"


def t2i_episode_rows(
    task: str, entries: list[dict], images: ReleaseImages, where: Path
) -> tuple[list[dict], list[dict]]:
    """Support rows from the episodes stored in each query, and the query rows.

    A query names its class (``task_label``), the episode's ``classes``, per class the stored
    ``images`` (and ``captions``, the fast tasks' demo prompts), its prompt (``question``) and
    ``answer`` (what a judge looks for in the generated image). Its own image, when it has one,
    is the release's reference: checked and named in provenance, never published as an image.
    """
    support, query = [], []
    for k, entry in enumerate(entries):
        label, classes, stored = (entry.get("task_label"), list(entry.get("classes") or []),
                                  entry.get("support") or {})  # fmt: skip
        problem = None
        if label not in classes or any(c not in stored for c in classes) or len(classes) < 2:
            problem = "task_label, classes and support keys disagree (or fewer than 2 classes)"
        elif not isinstance(entry.get("answer"), str) or not entry["answer"]:
            problem = f"answer {entry.get('answer')!r} is not a name a judge can look for"
        if problem:
            raise SourceError(f"{where.name}[{k}]: {problem}", path=where, fix=RELEASE_FIX)
        episode_support = []
        for position, key in enumerate(classes):
            paths = as_list(stored[key].get("images"))
            captions = list(stored[key].get("captions") or [])
            if task != "open_t2i_mi" and len(captions) < len(paths):
                raise SourceError(f"{where.name}[{k}]: class {key!r} has {len(paths)} images "
                                  f"but {len(captions)} captions", path=where, fix=RELEASE_FIX)  # fmt: skip
            real = str(stored[key].get("real_name", ""))
            ids = []
            for shot, path in enumerate(paths):
                refs, sources = images.refs([path], "support", _entry_id(entry, k), where)
                caption = captions[shot] if shot < len(captions) else None
                row = make_row(task, "support", f"{k:05d}-{position}-{shot}", images=refs,
                               question=demo_prompt(task, key, caption), answer=key,
                               extras={"episode_id": k, "word": key, "real_label": real,
                                       "class_name": real, "shot_index": shot},
                               sources=sources)  # fmt: skip
                support.append(row)
                ids.append(row["id"])
            episode_support.append({"word": key, "real_label": real, "image_ids": ids})
        _, sources = images.refs(as_list(entry.get("image")), "query", _entry_id(entry, k), where)
        query.append(make_row(
            task, "query", k, images=[], question=str(entry.get("question", "")),
            answer=entry["answer"],
            extras={"episode_id": k, "classes": classes, "query_word": label,
                    "real_label": str(stored[label].get("real_name", "")),
                    "class_name": entry["answer"], "episode_support": episode_support},
            sources=sources))  # fmt: skip
    return sorted(support, key=lambda r: r["id"]), query


COBSAT_LATENTS = ("object", "attribute")


def cobsat_rows(
    split: str, entries: list[dict], images: ReleaseImages, where: Path, stats: Counter
) -> list[dict]:
    """CoBSAT rows: each entry names its scenario (``task``, ``latent`` and the latent field's
    value), its ``object`` and ``attribute``, the text prompt (``question``), an image (support:
    the demonstration; query: the release's reference image, or only an ``id``) and ``answer`` =
    [latent value, non-latent value], what a judge looks for. The published ``answer`` is the
    latent value (the concept inferred from the demonstrations) and ``answers`` both. A query's
    reference image is checked and named in its provenance but not published as an image: the
    model never sees it and the judge does not compare with it (a copy of it is no answer key)."""
    rows = []
    for k, entry in enumerate(entries):
        latent = entry.get("latent")
        fields = {name: entry.get(name) for name in ("task", "object", "attribute")}
        answer = entry.get("answer")
        problem = None
        if latent not in COBSAT_LATENTS:
            problem = f"latent {latent!r} is not one of {', '.join(COBSAT_LATENTS)}"
        elif not all(isinstance(v, str) and v for v in fields.values()):
            problem = f"task, object and attribute must be non-empty strings, got {fields}"
        elif not (isinstance(answer, list) and len(answer) == 2
                  and all(isinstance(a, str) and a for a in answer)):  # fmt: skip
            problem = f"answer {answer!r} is not [latent value, non-latent value]"
        if problem:
            raise SourceError(f"{where.name}[{k}]: {problem}", path=where, fix=RELEASE_FIX)
        other = "attribute" if latent == "object" else "object"
        if answer != [fields[latent], fields[other]]:
            stats[f"{split}_answer_not_its_fields"] += 1  # kept as released: what was judged
        paths = as_list(entry.get("image"))
        if split == "support" and len(paths) != 1:
            raise SourceError(f"{where.name}[{k}]: a CoBSAT demonstration needs one image, "
                              f"got {len(paths)}", path=where, fix=RELEASE_FIX)  # fmt: skip
        refs, sources = images.refs(paths, split, _entry_id(entry, k), where)
        rows.append(
            make_row(
                "cobsat",
                split,
                k,
                images=refs if split == "support" else [],  # a query's image is never shown
                question=str(entry.get("question", "")),
                answer=answer[0],
                extras={
                    "scenario_id": f"{fields['task']}|{latent}|{fields[latent]}",
                    "cobsat_task": fields["task"],
                    "latent": latent,
                    "object": fields["object"],
                    "attribute": fields["attribute"],
                    "answers": list(answer),
                },
                sources=sources,
            )
        )
    return rows
