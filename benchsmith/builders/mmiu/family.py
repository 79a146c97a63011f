"""The MMIU family: what the shared layers need to build, publish, audit and read it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu import cli
from benchsmith.builders.mmiu.config import MmiuPublishSettings
from benchsmith.family.base import Family, Publication, RowAuditor


class MmiuFamily(Family):
    name = "mmiu"
    title = "MMIU (ScanNet and COCO tasks)"
    summary = "multi-image multiple choice from ScanNet v2 and COCO: plan -> check -> publish"
    steps = cli.STEPS
    root_names = cli.ROOT_NAMES
    repeated_configs = ("circular",)
    audit_help = (
        "the plan is rebuilt from the recorded ScanNet and COCO copies and every column "
        "compared; every image (embedded or referenced) re-renders to its sha256. --id: the "
        "item id, e.g. 3d_pose_estimation_00003 (in `circular`: the item id, which audits "
        "all its rotations)"
    )

    def params_fields(self) -> dict[str, Any]:
        from benchsmith.builders.mmiu.params import params_fields

        return params_fields()

    publish_inputs = cli.PublishInputs
    publish_settings = MmiuPublishSettings

    def publication(self, args: cli.PublishInputs, settings: MmiuPublishSettings) -> Publication:
        from benchsmith.builders.mmiu.publication import MmiuPublication
        from benchsmith.core.executor import ExecutorConfig

        executor = ExecutorConfig(settings.executor, settings.workers)
        return MmiuPublication(args.plan_dir, args.shortcuts, settings.scannet_images,
                               cli.parse_roots(args.root), executor)  # fmt: skip

    def declared_settings(self) -> dict[tuple[str, ...], type]:
        from benchsmith.builders.mmiu.config import FrameChoice, OptionStyle

        return {**super().declared_settings(), ("mmiu", "options"): OptionStyle,
                ("mmiu", "frames"): FrameChoice}  # fmt: skip

    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        from benchsmith.builders.mmiu.audit import MmiuAuditor

        return MmiuAuditor(dataset_dir, info, roots)

    predict_options = ("scannet", "skip_references")

    def prediction_requests(self, source):
        from benchsmith.builders.mmiu.predict import mmiu_requests

        return mmiu_requests(source, self.columns(source.info))

    def harness_rows(self, source):
        from benchsmith.builders.mmiu.predict import mmiu_harness_rows

        return mmiu_harness_rows(source, self.columns(source.info))

    def unsendable(self, info: dict[str, Any], config: str, options=None) -> str | None:
        from benchsmith.builders.mmiu.config import SCANNET_TASKS

        if options is not None and options.scannet is not None:
            return None  # rendered from the user's copy as the export goes
        if config in SCANNET_TASKS and info.get("scannet_images", "reference") == "reference":
            return ("its ScanNet images are published as references (ScanNet's terms); "
                    "render them from your ScanNet copy as the export goes (--scannet DIR), or "
                    "rehydrate the folder once (`benchsmith build mmiu rehydrate DATASET "
                    "--scannet DIR --out DIR`) and export that")  # fmt: skip
        return None

    def check_metrics(self, info: dict[str, Any]):
        from benchsmith.builders.mmiu.report_checks import check_metrics

        return check_metrics(info)

    def report_checks(self, info: dict[str, Any]):
        from benchsmith.builders.mmiu.report_checks import report_checks

        return report_checks(info)

    def columns(self, info: dict[str, Any]):
        from benchsmith.hf.dataset_view import ColumnMap

        return ColumnMap(id="id", question="question", answer="answer", choices="options",
                         image="images", subtask="task")  # fmt: skip


MMIU = MmiuFamily()
