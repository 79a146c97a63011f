"""The MMNeedle family: what the shared layers need to build, publish, audit and read it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.mmneedle import cli
from benchsmith.family.base import Family, Publication, RowAuditor
from benchsmith.family.publish_settings import PublishSettings


class MmneedleFamily(Family):
    name = "mmneedle"
    title = "MMNeedle"
    summary = "Multimodal Needle in a Haystack from COCO 2014 val: plan -> render -> publish"
    steps = cli.STEPS
    root_names = ("captions", "images")
    audit_help = (
        "stitched images re-render byte-identically from their COCO cells; a sample's captions "
        "are in the captions file under their annotation ids and its haystack's stitched images "
        "re-render. --id: sample_id (m{M}_n{N}_k{K}) or stitched_id (haystacks_n{N})"
    )

    def params_fields(self) -> dict[str, Any]:
        from benchsmith.builders.mmneedle.params import params_fields

        return params_fields()

    publish_inputs = cli.PublishInputs

    def publication(self, args: cli.PublishInputs, settings: PublishSettings) -> Publication:
        from benchsmith.builders.mmneedle.publication import MmneedlePublication

        return MmneedlePublication(args.plan_dir, args.render_dir(), args.lock,
                                   args.image_check_report())  # fmt: skip

    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        from benchsmith.builders.mmneedle.audit import MmneedleAuditor

        return MmneedleAuditor(dataset_dir, info, roots)

    def prediction_requests(self, source):
        """The haystack images in order, then the original prompt (the ``prompt`` column holds
        the whole of it: no instruction line is added), written as ``sample_id``."""
        from dataclasses import replace

        from benchsmith.family.requests import generic_requests
        from benchsmith.hf.dataset_view import DatasetView

        options = source.options
        if options.instruction is None:
            options = replace(options, instruction="")
        view = DatasetView(source.dataset_dir, source.config, source.split,
                           self.columns(source.info))  # fmt: skip
        return generic_requests(view, options, key_type=int)

    def check_metrics(self, info: dict[str, Any]):
        from benchsmith.builders.mmneedle.report_checks import check_metrics

        return check_metrics(info)

    def report_checks(self, info: dict[str, Any]):
        from benchsmith.builders.mmneedle.report_checks import report_checks

        return report_checks(info)

    def columns(self, info: dict[str, Any]):
        from benchsmith.hf.dataset_view import ColumnMap, ImageJoin

        # samples hold stitched ids; the images live in the haystacks_n{N} configs
        return ColumnMap(
            id="sample_id",
            question="prompt",
            answer="gold_answer",
            image_join=ImageJoin("haystack", "haystacks_n{grid}", "stitched_id"),
        )

    def not_samples(self, info: dict[str, Any], config: str) -> str | None:
        if config.startswith("haystacks_"):
            return "it holds the stitched images that the m{M}_n{N}_k{K} samples point to"
        return None


MMNEEDLE = MmneedleFamily()
