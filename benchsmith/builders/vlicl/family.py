"""The VL-ICL family: what the shared layers need to build, publish, audit and read it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl import cli
from benchsmith.family.base import Family, Publication, RowAuditor
from benchsmith.family.publish_settings import PublishSettings

GENERATION_NOT_EXPORTED = (
    "a text-to-image task: its answer is a generated image, which the harnesses' image-to-text "
    "runs cannot produce; run it with `benchsmith predict` against a server that generates "
    "images and score it with `benchsmith score --judge-model`"
)


class VliclFamily(Family):
    name = "vlicl"
    title = "VL-ICL Bench"
    summary = (
        "in-context-learning episodes from MiniImageNet, CLEVR, TextOCR, rendered operators "
        "and the release's text-to-image tasks"
    )
    steps = cli.STEPS
    root_names = cli.ROOT_NAMES
    audit_help = (
        "embedded images equal their source files, operator images re-render with the recorded "
        "font, CLEVR answers recount from the scenes; episodes name published rows. --id: the "
        "row id, e.g. clevr/query/00003 (in `episodes`: a query id, which audits every "
        "episode of that query)"
    )

    def params_fields(self) -> dict[str, Any]:
        from benchsmith.builders.vlicl.params import params_fields

        return params_fields()

    def declared_settings(self) -> dict[tuple[str, ...], type]:
        """The steps' blocks, and the task sizes per profile and the shots per task (read by
        the plan step)."""
        from benchsmith.builders.vlicl.config import Sizes
        from benchsmith.builders.vlicl.shots import Shots

        return {**super().declared_settings(), ("vlicl", "sizes"): Sizes, ("vlicl", "shots"): Shots}

    publish_inputs = cli.PublishInputs

    def publication(self, args: cli.PublishInputs, settings: PublishSettings) -> Publication:
        from benchsmith.builders.vlicl.publication import VliclPublication

        return VliclPublication(args.plan_dir, args.leakage_report(), cli.parse_roots(args.root))

    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        from benchsmith.builders.vlicl.audit import VliclAuditor

        return VliclAuditor(dataset_dir, info, roots)

    predict_options = ("shots", "seeds", "sampler")
    request_row_key = "query_id"  # a request is one (query, n_shot, seed) episode

    def prediction_requests(self, source):
        from benchsmith.builders.vlicl.predict import vlicl_requests

        return vlicl_requests(source, self.columns(source.info))

    def harness_rows(self, source):
        from benchsmith.builders.vlicl.predict import vlicl_harness_rows

        return vlicl_harness_rows(source, self.columns(source.info))

    def check_metrics(self, info: dict[str, Any]):
        from benchsmith.builders.vlicl.report_checks import check_metrics

        return check_metrics(info)

    def report_checks(self, info: dict[str, Any]):
        from benchsmith.builders.vlicl.report_checks import report_checks

        return report_checks(info)

    def columns(self, info: dict[str, Any]):
        from benchsmith.hf.dataset_view import ColumnMap

        return ColumnMap(id="id", question="question", answer="answer", image="images")

    def unsendable(self, info: dict[str, Any], config: str, options=None) -> str | None:
        from benchsmith.builders.vlicl.config import GENERATION_TASKS

        if config in GENERATION_TASKS:
            return GENERATION_NOT_EXPORTED
        return None

    def not_samples(self, info: dict[str, Any], config: str) -> str | None:
        if config == "episodes":
            return (
                "it lists the support examples of each episode; the queries are in the task configs"
            )
        return None


VLICL = VliclFamily()
