"""What an exported lmms-eval task runs: the ``doc_to_*``, ``process_results`` and aggregation
functions its generated ``utils.py`` binds to one published config.

lmms-eval loads the config's parquet itself (``dataset_path: parquet``); ``process_docs`` then
turns the rows it loaded into one doc per request that ``benchsmith predict`` would send for them
(``Family.prediction_requests``: VL-ICL gives one per query, shot count and seed), so a harness
run sends exactly the prompts ``predict`` sends. A doc holds the request's key (JSON), its system
prompt, its user turn as ordered parts (a text, or the index of one of its images), its images
and the gold answer in the scorer's form.
``process_results`` keeps ``{key, response}``; the aggregation writes them as a predictions file
and scores it with the family's scorer from :data:`benchsmith.scoring.SCORERS`: the number
lmms-eval reports is the number ``benchsmith score`` reports for the same replies.

The docs are written through ``datasets.Dataset.from_generator`` (Arrow on disk, batch by batch),
so a config's images are never all in memory. A doc's images are encoded bytes under the key
``images: {"bytes": [...]}``, decoded only by ``doc_to_visual`` and ``doc_to_messages``: with
``--log_samples`` lmms-eval keeps every doc it logs, less the values its
``is_multimodal_content`` calls media (a dict with a ``bytes`` key is one), so its memory stays
flat with the number of docs (decoded pictures inside the list of parts were kept: 8 GB for
MMNeedle). The cache fingerprint includes the published files' names, sizes and modification
times, so a rebuilt folder is never served stale docs.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

LOG = logging.getLogger("benchsmith.lmms_eval")
# docs per task, as process_docs made them: lmms-eval loads utils.py once per `!function` it
# names, so process_docs and the aggregation are bound to two BenchsmithTask objects; this
# module is imported once, and the task's spec is what they share
DOC_COUNTS: dict[tuple, int] = {}
IMAGE_TOKEN = "<image>"  # where an image goes in doc_to_text when images and text interleave


@dataclass
class BenchsmithTask:
    """One exported task: a published folder's config and split, and the predict options."""

    dataset_dir: str
    config: str
    split: str
    shots: tuple[int, ...] = ()
    seeds: tuple[int, ...] = ()
    sampler: str = "hashed"
    scannet: str | None = None  # MMIU: render referenced ScanNet images from this copy
    last_report: dict[str, Any] | None = field(default=None, repr=False)

    @cached_property
    def _family(self) -> tuple[Any, dict[str, Any]]:
        """The folder's family, through the registry (an export is only written for one); a
        curated folder's is the family its rows came from."""
        from benchsmith.builders import FAMILIES
        from benchsmith.curate.kind import CURATED
        from benchsmith.hf.reader import read_build_info

        info = read_build_info(Path(self.dataset_dir))
        if CURATED.holds(info):
            return FAMILIES.get(CURATED.source_family(info)), info
        return FAMILIES.get(info.get("family")), info

    @property
    def family(self) -> Any:
        return self._family[0]

    @property
    def info(self) -> dict[str, Any]:
        return self._family[1]

    @property
    def scorer(self) -> Any:
        from benchsmith.scoring import SCORERS

        return SCORERS.get(self.family.name)

    @property
    def spec(self) -> tuple:
        return (self.dataset_dir, self.config, self.split, tuple(self.shots), tuple(self.seeds),
                self.sampler, self.scannet)  # fmt: skip

    def requests(self) -> Iterator[Any]:
        from benchsmith.family.requests import PredictOptions, RequestSource

        options = PredictOptions(shots=self.shots, seeds=self.seeds, sampler=self.sampler,
                                 scannet=Path(self.scannet) if self.scannet else None)  # fmt: skip
        from benchsmith.curate.kind import CURATED

        if CURATED.holds(self.info):  # the source family's requests for the kept rows
            from benchsmith.curate.evaluate import curated_requests

            return curated_requests(Path(self.dataset_dir), self.info, self.config, self.split,
                                    self.family, options)  # fmt: skip
        source = RequestSource(Path(self.dataset_dir), self.info, self.config, self.split, options)
        return self.family.prediction_requests(source)

    def _fingerprint(self) -> str:
        """What identifies the docs: the task, and the published files as they are now (every
        parquet file: VL-ICL requests also read the support split and the episodes config)."""
        folder = Path(self.dataset_dir)
        files = [folder / "build_info.json", folder / "README.md",
                 *sorted(folder.glob("data/**/*.parquet"))]  # fmt: skip
        stats = [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files if p.exists()]
        return json.dumps([self.config, self.split, self.shots, self.seeds, self.sampler,
                           self.scannet, stats])  # fmt: skip

    # --- the functions the task YAML names -------------------------------------------------
    def process_docs(self, dataset: Any) -> Any:
        """The rows lmms-eval loaded -> one doc per request for them, in request order."""
        import datasets

        column = self.family.columns(self.info).id
        wanted = {str(v) for v in dataset[column]}
        gold = {str(next(iter(r.values()))): r["response"]
                for r in self.scorer.reference_predictions(Path(self.dataset_dir), self.config)}  # fmt: skip
        features = datasets.Features({
            "benchsmith_key": datasets.Value("string"),
            "system": datasets.Value("string"),
            "parts": datasets.List({"text": datasets.Value("string"),
                                    "image": datasets.Value("int32")}),
            "images": {"bytes": datasets.List(datasets.Value("binary"))},
            "target": datasets.Value("string"),
        })  # fmt: skip
        docs = datasets.Dataset.from_generator(
            _request_docs, features=features,
            gen_kwargs={"spec": (self.dataset_dir, self.config, self.split, self.shots,
                                 self.seeds, self.sampler, self.scannet),
                        "wanted": tuple(sorted(wanted)), "gold": gold,
                        "fingerprint": self._fingerprint()},
        )  # fmt: skip
        DOC_COUNTS[self.spec] = len(docs)
        return docs

    def doc_to_visual(self, doc: dict[str, Any]) -> list[Any]:
        """The doc's images, decoded now, in the order its parts place them."""
        return [_decoded(data) for data in doc["images"]["bytes"]]

    def doc_to_text(self, doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None
                    ) -> str:  # fmt: skip
        """The text parts joined by newlines; where images come between texts (VL-ICL's
        demonstrations), an ``<image>`` marks each image's place; a system prompt comes first."""
        pre, post = _prompts(lmms_eval_specific_kwargs)
        parts = doc["parts"]
        first_text = next((k for k, p in enumerate(parts) if p["image"] is None), len(parts))
        interleaved = any(p["image"] is not None for p in parts[first_text:])
        lines = [p["text"] if p["image"] is None else IMAGE_TOKEN for p in parts
                 if p["image"] is None or interleaved]  # fmt: skip
        text = "\n".join(t for t in lines if t)
        return "\n".join(t for t in (doc["system"], f"{pre}{text}{post}") if t)

    def doc_to_messages(self, doc: dict[str, Any],
                        lmms_eval_specific_kwargs: dict | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """lmms-eval's chat messages: the system prompt, then the user turn with images and
        texts in the order ``predict`` sends them."""
        pre, post = _prompts(lmms_eval_specific_kwargs)
        texts = [k for k, p in enumerate(doc["parts"]) if p["image"] is None and p["text"]]
        content = []
        for k, part in enumerate(doc["parts"]):
            if part["image"] is not None:
                picture = _decoded(doc["images"]["bytes"][part["image"]])
                content.append({"type": "image", "url": picture})
            elif part["text"]:
                text = (pre if texts and k == texts[0] else "") + part["text"]
                text += post if texts and k == texts[-1] else ""
                content.append({"type": "text", "text": text})
        messages = [{"role": "user", "content": content}]
        if doc["system"]:
            messages.insert(0, {"role": "system",
                                "content": [{"type": "text", "text": doc["system"]}]})  # fmt: skip
        return messages

    def doc_to_target(self, doc: dict[str, Any]) -> str:
        return doc["target"]

    def process_results(self, doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
        response = results[0] if results else ""
        return {self.metric: {"key": doc["benchsmith_key"], "response": response}}

    def aggregate(self, items: list[dict[str, Any]]) -> float | None:
        """Score the replies with the family's scorer (as ``benchsmith score`` does, default
        options); the full report is logged and kept in ``last_report``.

        Fewer replies than docs (lmms-eval's ``--limit N`` runs the first N) are scored the same
        way: a doc not run counts as missing, so wrong, and the number is the config's score with
        those wrong, not a score over the docs that ran. A warning says so, with the counts, and
        the report carries them (``docs_run``, ``docs_total``)."""
        with tempfile.TemporaryDirectory(prefix="benchsmith-lmms-") as scratch:
            path = Path(scratch) / "predictions.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for item in items:
                    row = {**json.loads(item["key"]), "response": item["response"]}
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            report = self.scorer.score_file(Path(self.dataset_dir), self.config, path,
                                            strict_ids=False)  # fmt: skip
        total = DOC_COUNTS.get(self.spec)
        if total is not None and len(items) < total:
            report = {**report, "docs_run": len(items), "docs_total": total}
            LOG.warning(
                "benchsmith %s/%s: lmms-eval ran %d of the task's %d docs (--limit?); the %d "
                "not run count as wrong, so %s is the config's score with them wrong, not the "
                "score of the docs that ran. Run without --limit for the config's number.",
                self.family.name, self.config, len(items), total, total - len(items),
                self.metric,
            )  # fmt: skip
        self.last_report = report
        LOG.info("benchsmith %s/%s: %s", self.family.name, self.config, json.dumps(report))
        return self.scorer.headline_value(report)

    @property
    def metric(self) -> str:
        return metric_name(self.family.name, self.scorer.headline)


def metric_name(family: str, headline: str) -> str:
    """``mmiu`` + ``overall.accuracy`` -> ``mmiu_overall_accuracy``."""
    return f"{family}_{headline.replace('.', '_')}"


def _decoded(data: bytes) -> Any:
    """An image's bytes decoded to RGB, as lmms-eval's models expect (one already RGB is not
    converted: ``convert`` would copy every pixel)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    return image if image.mode == "RGB" else image.convert("RGB")


def _prompts(kwargs: dict | None) -> tuple[str, str]:
    kwargs = kwargs or {}
    return kwargs.get("pre_prompt") or "", kwargs.get("post_prompt") or ""


def _request_docs(spec: tuple, wanted: tuple[str, ...], gold: dict[str, str],
                  fingerprint: str) -> Iterator[dict[str, Any]]:  # fmt: skip
    """The docs ``process_docs`` writes (a module function of plain arguments: ``from_generator``
    hashes it and them, the fingerprint among them, to name its cache). No argument is a list:
    ``from_generator`` would shard the generator over a list's items and reorder the docs."""
    del fingerprint
    task, chosen = BenchsmithTask(*spec), set(wanted)
    for request in task.requests():
        sample_id = str(next(iter(request.key.values())))
        if sample_id not in chosen:
            continue
        images = [p for p in request.parts if not isinstance(p, str)]
        parts, placed = [], 0
        for part in request.parts:
            if isinstance(part, str):
                parts.append({"text": part, "image": None})
            else:
                parts.append({"text": None, "image": placed})
                placed += 1
        yield {"benchsmith_key": request.key_text, "system": request.system, "parts": parts,
               "images": {"bytes": images}, "target": gold.get(sample_id)}  # fmt: skip
