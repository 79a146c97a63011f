"""Score VL-ICL's text-to-image configs: a vision model judges each generated image.

A text-to-image answer is an image, so no string match can score it. As in the original
(``evals/eval.py``), a judge model looks at each generated image and answers yes or no to "does
the image contain X", where X is the query's gold: the class's real name for ``open_t2i_mi``
(not the made-up word the model was asked to draw), and for CoBSAT both of its answer values,
the latent one (inferred from the demonstrations) and the non-latent one (named in the prompt):
a CoBSAT image is right only when both are there. The report gives ``latent`` and
``non_latent`` accuracies beside the total, as the original does.

Why through the one LLM client (:mod:`benchsmith.core.llm`): the judge's answers are cached by
request content, so re-scoring costs nothing and gives the same numbers, an interrupted scoring
resumes where it stopped, and the judge's model and prompt are recorded in the report (a score
without its judge cannot be compared with another).

Modes:

- ``fixed`` (default): the prompt asks for one word, and the reply's first word decides: "yes"
  is a pass, "no" a fail; anything else is a fail counted as ``unparsed`` (a judge that
  rambles shows up instead of passing on "...yes..." somewhere).
- ``legacy``: the original's prompts, byte for byte (``Decide whether the image contains
  {answer}. Answer with 'yes' or 'no'.\\n``; CoBSAT: ``... the following concept: {answer}.
  ...``) and its rule, ``'yes' in reply.lower()`` (so "eyes" passes), with its 5-token
  limit. What it cannot reproduce: the original's judge is a local LLaVA-v1.6-Vicuna-7B with its
  own conversation template and image preprocessing; here the judge is whatever model the
  server serves, sent the image and the prompt as one user turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.base import rate, read_gold_table
from benchsmith.scoring.vlicl import RunTally

JUDGE_PROMPTS = {
    "fixed": "Does this image show {concept}? Answer with one word: yes or no.",
    "legacy": "Decide whether the image contains {concept}. Answer with 'yes' or 'no'.\n",
    "legacy_cobsat": "Decide whether the image contains the following concept: {concept}. "
    "Answer with 'yes' or 'no'.\n",
}
LEGACY_MAX_TOKENS = 5  # the original's max_new_tokens for the judge
TWO_CONCEPT_TASKS = frozenset({"cobsat"})  # gold = [latent value, non-latent value]


@dataclass(frozen=True)
class JudgeSettings:
    """Which judge to ask, and where; ``cache_dir`` as the LLM client takes it."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    cache_dir: Path | None = Path(".benchsmith/llm-cache")
    concurrency: int = 4


@dataclass(frozen=True)
class GoldImageQuery:
    query_id: str
    task: str
    concepts: tuple[str, ...]  # what the image must show: one, or CoBSAT's latent and non-latent


def prompt_for(task: str, concept: str, mode: str) -> str:
    if mode == "legacy":
        key = "legacy_cobsat" if task in TWO_CONCEPT_TASKS else "legacy"
        return JUDGE_PROMPTS[key].format(concept=concept)
    return JUDGE_PROMPTS["fixed"].format(concept=concept)


def verdict(reply: str, mode: str) -> bool | None:
    """True (pass), False (fail), or None: the fixed rule found no yes/no first word."""
    if mode == "legacy":
        return "yes" in reply.lower()
    words = reply.strip().lower().split()
    first = words[0].strip(".,!:;\"'*()") if words else ""
    return {"yes": True, "no": False}.get(first)


def load_image_gold(dataset_dir: str | Path, config: str) -> list[GoldImageQuery]:
    """The query split's ids and what each image must show: ``answer``, or for CoBSAT its
    ``answers`` column ([latent value, non-latent value])."""
    columns = ["id", "task", "answer", *(["answers"] if config in TWO_CONCEPT_TASKS else [])]
    table = read_gold_table(dataset_dir, config, "query", columns)
    where = Path(dataset_dir) / "data" / config
    golds = []
    for row in table.to_pylist():
        answer, task = row.get("answers") or row["answer"], row["task"]
        concepts = tuple(answer) if isinstance(answer, list) else (answer,)
        wanted = 2 if task in TWO_CONCEPT_TASKS else 1
        if len(concepts) != wanted or not all(isinstance(c, str) and c for c in concepts):
            raise BenchsmithError(
                f"{row['id']}: answer {answer!r} is not {wanted} non-empty name(s)",
                path=where, fix="rebuild and republish this config",
            )  # fmt: skip
        golds.append(GoldImageQuery(row["id"], task, concepts))
    return golds


@dataclass
class _ImageTally(RunTally):
    """The text scorer's counts, plus how often each of CoBSAT's two values was seen."""

    concept_hits: list[int] = field(default_factory=lambda: [0, 0])  # latent, non-latent

    def add(self, other: _ImageTally) -> None:  # type: ignore[override]
        super().add(other)
        self.concept_hits = [
            a + b for a, b in zip(self.concept_hits, other.concept_hits, strict=True)
        ]


def _block(tally: _ImageTally, two_concepts: bool) -> dict[str, Any]:
    accuracy, stderr = rate((tally.correct, tally.n))
    block = {"accuracy": accuracy, "n": tally.n, "correct": tally.correct, "stderr": stderr,
             "missing": tally.missing, "unparsed": tally.unparsed}  # fmt: skip
    if two_concepts:
        block["latent"] = rate((tally.concept_hits[0], tally.n))[0]
        block["non_latent"] = rate((tally.concept_hits[1], tally.n))[0]
    return block


def score_vlicl_images(
    dataset_dir: str | Path,
    config: str,
    predictions_path: str | Path,
    judge: JudgeSettings,
    *,
    shots: Sequence[int] | None = None,
    mode: str = "fixed",
    strict: bool = False,
) -> dict[str, Any]:
    """Judge every generated image of the predictions and score them per shot and seed (every
    (shot, seed) run over every query: an absent row or a null response is ``missing``)."""
    import statistics

    from benchsmith.core.llm import LLMClient, LLMConfig, image_part, require_ok, text_part
    from benchsmith.scoring.generated_images import read_generated_image
    from benchsmith.scoring.vlicl_predictions import read_predictions, select_runs

    path = Path(predictions_path)
    golds = load_image_gold(dataset_dir, config)
    rows = [r for r in read_predictions(path) if shots is None or r.n_shot in shots]
    runs, unknown = select_runs(rows, {g.query_id for g in golds}, path, strict)
    by_key = {(r.n_shot, r.seed, r.query_id): r for r in rows}
    if not runs:
        raise BenchsmithError(f"no prediction matches a query of config {config!r}", path=path,
                              fix="check --config, --shots and the query_id values")  # fmt: skip
    questions: list[tuple[tuple[int, int, str], int]] = []  # (run and query, concept index)
    messages = []
    for (n_shot, seed), responses in sorted(runs.items()):
        for gold in golds:
            response = responses.get(gold.query_id)
            if response is None:
                continue
            row = by_key[(n_shot, seed, gold.query_id)]
            image = read_generated_image(path, response, row.image_sha256, row.line)
            for index, concept in enumerate(gold.concepts):
                prompt = prompt_for(gold.task, concept, mode)
                questions.append(((n_shot, seed, gold.query_id), index))
                messages.append(
                    [{"role": "user", "content": [image_part(image), text_part(prompt)]}]
                )
    client = LLMClient(LLMConfig(model=judge.model, base_url=judge.base_url,
                                 api_key_env=judge.api_key_env, cache_dir=judge.cache_dir,
                                 max_concurrency=judge.concurrency,
                                 max_tokens=LEGACY_MAX_TOKENS if mode == "legacy" else None))  # fmt: skip
    replies = client.complete_many(messages, desc=f"judge {judge.model}")
    require_ok(replies, what=f"judge requests to {client.base_url}")
    passes: dict[tuple[int, int, str], list[bool | None]] = defaultdict(list)
    for (where, _), reply in zip(questions, replies, strict=True):
        passes[where].append(verdict(reply.text or "", mode))
    two = any(g.task in TWO_CONCEPT_TASKS for g in golds)
    per_run: dict[int, dict[int, _ImageTally]] = defaultdict(dict)
    for n_shot, seed in sorted(runs):
        tally = _ImageTally(n=len(golds))
        for gold in golds:
            answers = passes.get((n_shot, seed, gold.query_id))
            if answers is None:
                tally.missing += 1
                continue
            tally.unparsed += any(a is None for a in answers)
            tally.correct += all(answers)
            for index, passed in enumerate(answers[:2]):
                tally.concept_hits[index] += bool(passed)
        per_run[n_shot][seed] = tally
    overall, per_shot = _ImageTally(), {}
    for n_shot, seeds in sorted(per_run.items()):
        pooled = _ImageTally()
        for tally in seeds.values():
            pooled.add(tally)
        overall.add(pooled)
        accuracies = [t.correct / t.n for t in seeds.values()]
        per_shot[str(n_shot)] = {
            **_block(pooled, two),
            "mean_over_seeds": statistics.fmean(accuracies),
            "std_over_seeds": statistics.stdev(accuracies) if len(accuracies) > 1 else None,
            "per_seed": {str(s): _block(t, two) for s, t in sorted(seeds.items())},
        }
    return {
        "config": config,
        "tasks": sorted({g.task for g in golds}),
        "mode": mode,
        "strict": strict,
        "shots": sorted(shots) if shots is not None else None,
        "accuracy_unit": "fraction",
        "n_queries": len(golds),
        "overall": _block(overall, two),
        "per_shot": per_shot,
        "missing": overall.missing,
        "unparsed": overall.unparsed,
        "unknown_ids": unknown,
        "judge": {
            "model": judge.model,
            "base_url": client.base_url,
            "prompt": JUDGE_PROMPTS["legacy_cobsat" if mode == "legacy" and two else mode],
            "rule": "'yes' in reply.lower()" if mode == "legacy" else "first word yes / no",
            "max_tokens": client.config.max_tokens,
            "questions": len(messages),
            "requests": client.stats.requests,
            "cache_hits": client.stats.cache_hits,
        },
    }
