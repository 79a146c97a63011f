"""Text-only answerability: drop samples that LLMs answer without seeing any image (LIME §3).

A sample whose question can be answered from its text alone (or from memory of the benchmark)
does not test vision. Each configured LLM gets the *same* task prompt as the judges
(:func:`benchsmith.options.question_prompt.render_prompt`) with **no image part at all**, and the
caller's ``is_correct`` scores each reply with the benchmark's own metric and cutoff.

Rule: drop with ``TEXT_ONLY_ANSWERABLE`` when more than ``max_text_only_correct`` LLMs answer
correctly. The default 0 is LIME's "any LLM correct => remove" (an inference from its code; the
paper does not state the vote). Evidence holds every model's reply and its cache key, kept
sample or dropped, and names the models whose reply was right (``correct_models``), so the
decision can be audited and replayed from the LLM cache.

When a call fails (server down, junk reply after retries) and the successful calls alone do not
already exceed the threshold, leakage cannot be decided: the sample is **kept** with reason
``TEXT_ONLY_LLM_ERROR`` and counted as undecided, rather than silently passed or dropped, and
``curate`` publishes nothing while one remains. Because answers are cached and failures are not,
a rerun sends only the failed calls and decides those samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.llm_messages import user_message
from benchsmith.core.settings import setting
from benchsmith.options.question_prompt import render_prompt
from benchsmith.stages.base import (
    Stage,
    StageContext,
    StageDecision,
    StageResult,
    log_llm_stats,
)

if TYPE_CHECKING:
    from benchsmith.core.llm import ChatResult, LLMClient
    from benchsmith.hf.dataset_view import SampleView

TEXT_ONLY_ANSWERABLE = "TEXT_ONLY_ANSWERABLE"
TEXT_ONLY_LLM_ERROR = "TEXT_ONLY_LLM_ERROR"


@dataclass(frozen=True)
class TextOnlySettings:
    """LIME's text-only check: the question asked without its image."""

    models: tuple[str, ...] = setting(
        (), "LLMs asked the question without the image", flag_name="--text-only-model",
        metavar="NAME",
    )  # fmt: skip
    max_text_only_correct: int = setting(
        0, "drop when more than this many models answer correctly", minimum=0
    )
    max_tokens: int = setting(128, "reply length asked for (LIME used 128)", minimum=1,
                              flag=False)  # fmt: skip


def text_only_messages(sample: SampleView) -> list[dict]:
    """The judge prompt without the image: a single plain-text user turn."""
    return [user_message(render_prompt(sample.question, sample.choices))]


def _decide(
    sample: SampleView,
    results: dict[str, ChatResult],
    is_correct: Callable[[SampleView, str], bool],
    config: TextOnlySettings,
) -> StageDecision:
    replied = {name: r for name, r in sorted(results.items()) if r.ok}
    answered = sorted(name for name, r in replied.items() if is_correct(sample, r.text or ""))
    failed = {name: r.error for name, r in results.items() if not r.ok}
    # every reply is recorded, right or wrong, so a kept sample shows what each model said
    evidence = {
        "models_asked": list(config.models),
        "n_correct": len(answered),
        "max_text_only_correct": config.max_text_only_correct,
        "correct_models": answered,
        "responses": {name: r.text for name, r in replied.items()},
        "cache_keys": {name: r.key for name, r in replied.items()},
        "llm_models": {name: r.model for name, r in replied.items()},
    }
    if failed:
        evidence["errors"] = failed
    if len(answered) > config.max_text_only_correct:
        return StageDecision(sample.sample_id, "drop", TEXT_ONLY_ANSWERABLE, evidence)
    if failed:
        return StageDecision(sample.sample_id, "keep", TEXT_ONLY_LLM_ERROR, evidence)
    return StageDecision(sample.sample_id, "keep", None, evidence)


def check_text_only(
    samples: Sequence[SampleView],
    clients: Mapping[str, LLMClient],
    is_correct: Callable[[SampleView, str], bool],
    config: TextOnlySettings,
) -> dict[str, StageDecision]:
    """One decision per sample id; see the module docstring for the rule and the error policy."""
    if not config.models:
        raise BenchsmithError(
            "the text-only leakage check has no models", fix="list at least one LLM in its params"
        )
    missing = [name for name in config.models if name not in clients]
    if missing:
        raise BenchsmithError(
            f"no LLM client configured for text-only model(s) {missing}",
            fix="configure a client for every model named in the text-only check",
        )
    requests = [text_only_messages(sample) for sample in samples]
    per_model = {
        name: clients[name].complete_many(
            requests, max_tokens=config.max_tokens, desc=f"text-only {name}"
        )
        for name in config.models
    }
    decisions = {
        sample.sample_id: _decide(
            sample, {name: per_model[name][i] for name in config.models}, is_correct, config
        )
        for i, sample in enumerate(samples)
    }
    return decisions


class TextOnlyStage(Stage):
    name = "text_only"
    title = "Text-only answerability"
    summary = (
        "ask LLMs (--text-only-model, repeatable) the question WITHOUT the image; drop when "
        "more than --max-text-only-correct of them answer it."
    )
    params_key = "text_only"
    settings_type = TextOnlySettings
    reasons = {
        TEXT_ONLY_ANSWERABLE: "more text-only LLMs answered it without the image than allowed",
        TEXT_ONLY_LLM_ERROR: "a text-only call failed, so leakage is undecided: kept (curate "
        "publishes only with --publish-undecided; rerun to retry)",
    }
    undecided_reasons = frozenset({TEXT_ONLY_LLM_ERROR})
    card_section = """\
## Text-only answerability

The question (with its options) was sent **without any image** to {{ report.models | join(", ") }};
a sample is removed when more than {{ report.max_text_only_correct }} of them answer it correctly.
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: TextOnlySettings, context: StageContext
    ) -> str | None:
        return None if settings.models else "no text-only models"

    def run(
        self, samples: Sequence[Any], settings: TextOnlySettings, context: StageContext
    ) -> StageResult:
        clients = {model: context.llm_client(model) for model in settings.models}
        decisions = check_text_only(samples, clients, context.is_correct, settings)
        report = {
            "models": list(settings.models),
            "max_text_only_correct": settings.max_text_only_correct,
        }
        log_llm_stats(self.name, {m: c.stats for m, c in clients.items()})
        return StageResult(dict(decisions), report)


TEXT_ONLY = TextOnlyStage()
