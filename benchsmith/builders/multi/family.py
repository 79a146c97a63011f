"""The MULTI family: what the shared layers need to build, publish, audit and read it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.multi import cli
from benchsmith.family.base import Family, Publication, RowAuditor
from benchsmith.family.publish_settings import PublishSettings


class MultiFamily(Family):
    name = "multi"
    title = "MULTI (Chinese exam questions with images)"
    summary = "exam questions from the release, crawled HTML and scans: ocr -> questions -> select"
    steps = cli.STEPS
    root_names = cli.ROOT_NAMES
    repeated_configs = ("elite",)
    audit_help = (
        "the questions and select steps re-run from the recorded release and converted pages and "
        "every column compared, images by sha256. --id: a question id, e.g. czsx_0_0 (in "
        "`extend`: the knowledge key)"
    )

    def params_fields(self) -> dict[str, Any]:
        from benchsmith.builders.multi.params import params_fields

        return params_fields()

    publish_inputs = cli.PublishInputs

    def publication(self, args: cli.PublishInputs, settings: PublishSettings) -> Publication:
        from benchsmith.builders.multi.publication import MultiPublication

        return MultiPublication(args.plan_dir, cli.parse_roots(args.root))

    def declared_settings(self) -> dict[tuple[str, ...], type]:
        from benchsmith.builders.multi.config import SETTINGS_BLOCKS

        blocks = {("multi", name): kind for name, kind in SETTINGS_BLOCKS.items()}
        return {**super().declared_settings(), **blocks}

    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        from benchsmith.builders.multi.audit import MultiAuditor

        return MultiAuditor(dataset_dir, info, roots)

    def prediction_requests(self, source):
        from benchsmith.builders.multi.predict import multi_requests

        return multi_requests(source, self.columns(source.info))

    def harness_rows(self, source):
        from benchsmith.builders.multi.predict import multi_harness_rows

        return multi_harness_rows(source, self.columns(source.info))

    def check_metrics(self, info: dict[str, Any]):
        from benchsmith.builders.multi.report_checks import check_metrics

        return check_metrics(info)

    def report_checks(self, info: dict[str, Any]):
        from benchsmith.builders.multi.report_checks import report_checks

        return report_checks(info)

    def columns(self, info: dict[str, Any]):
        from benchsmith.hf.dataset_view import ColumnMap

        return ColumnMap(id="question_id", question="text", answer="answer", choices="options",
                         image="images", subtask="question_type")  # fmt: skip

    def not_samples(self, info: dict[str, Any], config: str) -> str | None:
        return "knowledge pieces that questions link to" if config == "extend" else None


MULTI = MultiFamily()
