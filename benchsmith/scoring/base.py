"""The scorer interface, and what every family's scorer shares.

A scorer reads a family's gold answers from a published folder (a few columns of one split,
through the one reader :mod:`benchsmith.hf.reader`), reads a predictions JSONL (through
:func:`benchsmith.scoring.predictions.prediction_lines`) and computes its metrics. Rates come
with binomial standard errors from :func:`rate`. The registry is
:data:`benchsmith.scoring.SCORERS`, keyed by family name, and ``benchsmith score DIR`` picks
the scorer from the folder's ``build_info.json`` (a curated folder: its source family's).

Options a scorer takes on the command line are declared as :class:`ScoreOption` so that one
``score`` verb can list every family's options in its ``--help`` and refuse an option that does
not apply to the dataset at hand.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchsmith.core.errors import BenchsmithError

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class ScoreOption:
    """One command-line option of a scorer; no ``type`` and no ``choices`` means a switch."""

    flag: str
    help: str
    choices: tuple[str, ...] | None = None
    type: Callable[[str], Any] | None = None
    default: Any = None
    metavar: str | None = None  # what the value is (MODEL, URL, DIR, K); choices show themselves
    multiple: bool = False  # several values: `--flag A B` or `--flag A --flag B`, the same
    keyword: str | None = None  # the scorer's keyword argument, when not the flag's name

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def argument(self) -> str:
        """The keyword ``score_file`` takes this option's value as."""
        return self.keyword or self.dest

    def add_to(self, group: Any) -> None:
        if self.choices is None and self.type is None:
            group.add_argument(self.flag, dest=self.dest, action="store_true", help=self.help)
        else:  # several values: the CLI gives every such flag one action (commands/list_flag)
            group.add_argument(
                self.flag,
                dest=self.dest,
                choices=self.choices,
                type=self.type,
                default=self.default,
                metavar=None if self.choices else (self.metavar or "VALUE"),
                help=self.help,
                **({"nargs": "+"} if self.multiple else {}),
            )

    def is_default(self, value: Any) -> bool:
        return (
            value in (None, False)
            if self.choices is None and self.type is None
            else (value == self.default)
        )


def rate(hits: Sequence[bool] | tuple[int, int]) -> tuple[float | None, float | None]:
    """Accuracy and its binomial standard error ``sqrt(p(1-p)/n)``; ``None`` without samples.

    Takes per-sample verdicts, or ``(correct, n)``.
    """
    if isinstance(hits, tuple) and len(hits) == 2 and all(isinstance(v, int) for v in hits):
        correct, n = hits
    else:
        correct, n = sum(hits), len(hits)
    if n == 0:
        return None, None
    p = correct / n
    return p, math.sqrt(p * (1 - p) / n)


def read_gold_table(
    dataset_dir: str | Path, config: str, split: str, columns: Sequence[str]
) -> pa.Table:
    """The gold columns of one published split; errors name the folder and the fix."""
    from benchsmith.hf.reader import read_columns  # pyarrow loads only when scoring runs

    return read_columns(dataset_dir, config, split, columns)


def class_label_names(dataset_dir: str | Path, config: str, column: str) -> list[str]:
    """A ClassLabel column's names, from the card's ``dataset_info`` (no ``datasets`` import)."""
    from benchsmith.hf.reader import readme_metadata

    for entry in readme_metadata(Path(dataset_dir)).get("dataset_info") or []:
        if entry.get("config_name") != config:
            continue
        for feature in entry.get("features") or []:
            if feature.get("name") == column:
                names = feature["dtype"]["class_label"]["names"]
                return [names[str(k)] for k in range(len(names))]
    raise BenchsmithError(
        f"the card has no {column} labels for this config",
        path=Path(dataset_dir) / "README.md",
        fix="publish the dataset again with benchsmith",
    )


class Scorer(ABC):
    """One family's scorer: ``score_file(dataset, config, predictions, **options)``."""

    family: ClassVar[str]
    summary: ClassVar[str]  # one line
    description: ClassVar[str]  # the answer-extraction policy, for --help
    headline: ClassVar[str]  # the report's main accuracy, as a dotted path ("overall.accuracy")
    options: ClassVar[tuple[ScoreOption, ...]] = ()

    @abstractmethod
    def reference_predictions(
        self, dataset_dir: Path, config: str, response: str | None = None
    ) -> list[dict[str, Any]]:
        """Prediction rows in this scorer's format answering every sample of ``config`` with its
        gold answer (or with ``response``): what a perfect run writes, to check a setup."""

    @abstractmethod
    def sample_score(self, row: dict[str, Any], response: str) -> float:
        """1.0 when ``response`` answers the published ``row`` right under this scorer's default
        policy, else 0.0: how curation scores a judge's reply to one of this family's samples,
        so a judge and ``benchsmith score`` never disagree about the same reply."""

    def question_points(
        self, rows: list[dict[str, Any]], predictions: Path
    ) -> dict[str, tuple[float, float]]:
        """``{sample id: (points, possible)}`` of one run over gold ``rows`` (a build step's
        rows, not a published folder): how a step that weighs judges scores them."""
        raise BenchsmithError(f"the {self.family} scorer does not score runs question by question")

    def unscorable(self, config: str) -> str | None:
        """Why this scorer cannot score ``config`` by its answers alone although it holds
        samples (``score_file`` refuses it with this reason unless given the options it names:
        a judge for generated images); None when it can."""
        return None

    def headline_value(self, report: dict[str, Any]) -> float | None:
        value: Any = report
        for key in self.headline.split("."):
            value = value[key]
        return value

    @abstractmethod
    def score_file(
        self, dataset_dir: Path, config: str, predictions: Path, **options: Any
    ) -> dict[str, Any]:
        """Score a predictions JSONL against one config; a JSON-serialisable report."""


def unknown_option_error(option: ScoreOption, owner: str, family: str) -> BenchsmithError:
    return BenchsmithError(
        f"{option.flag} applies to {owner} datasets, but this one is {family}",
        fix=f"drop {option.flag} (see `benchsmith score --help` for each family's options)",
    )
