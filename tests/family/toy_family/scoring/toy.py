"""Toy's scorer: the response, stripped, equals the gold answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.scoring.base import Scorer, rate, read_gold_table
from benchsmith.scoring.predictions import prediction_lines


class ToyScorer(Scorer):
    family = "toy"
    summary = "exact match of the stripped response"
    description = "a response is right when, stripped, it is the gold answer"
    headline = "accuracy"

    def reference_predictions(self, dataset_dir: Path, config: str, response: str | None = None):
        gold = read_gold_table(dataset_dir, config, "test", ["id", "answer"]).to_pylist()
        return [{"id": r["id"], "response": r["answer"] if response is None else response}
                for r in gold]  # fmt: skip

    def sample_score(self, row: dict[str, Any], response: str) -> float:
        return float(response.strip() == row["answer"])

    def score_file(self, dataset_dir: Path, config: str, predictions: Path, **options: Any):
        gold = {r["id"]: r for r in read_gold_table(dataset_dir, config, "test",
                                                     ["id", "answer"]).to_pylist()}  # fmt: skip
        said = {
            p["id"]: p["response"] for _, p in prediction_lines(predictions, "JSONL id/response")
        }
        hits = [self.sample_score(row, said.get(key, "")) == 1.0 for key, row in gold.items()]
        accuracy, stderr = rate(hits)
        return {"accuracy": accuracy, "stderr": stderr, "n": len(hits)}


TOY_SCORER = ToyScorer()
