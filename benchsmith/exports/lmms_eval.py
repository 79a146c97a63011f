"""lmms-eval task folders from a published folder: a task YAML and a ``utils.py`` per config.

lmms-eval finds tasks under ``--include_path DIR`` by their YAML files. Each task we write reads
the config's published parquet itself (``dataset_path: parquet`` with ``data_files`` naming the
files by absolute path), and names its functions with ``!function utils.NAME``; ``utils.py``
binds them to :class:`benchsmith.exports.lmms_eval_task.BenchsmithTask`, which builds the same
requests ``benchsmith predict`` sends and scores with the family's scorer. So benchsmith must be
installed where lmms-eval runs, and the published folder must stay where it was exported from
(export again after moving it). A group YAML lists every task, so ``--tasks benchsmith_FAMILY``
runs them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchsmith.core.atomic import atomic_write_text
from benchsmith.exports.lmms_eval_task import metric_name

FUNCTIONS = ("process_docs", "doc_to_visual", "doc_to_text", "doc_to_messages", "doc_to_target",
             "process_results")  # fmt: skip
MAX_NEW_TOKENS = 1024  # room for MULTI's worked answers; multiple choice stops long before


class FunctionRef(str):
    """A ``!function utils.NAME`` scalar in the YAML we write."""


class _TaskDumper(yaml.SafeDumper):
    pass


_TaskDumper.add_representer(
    FunctionRef, lambda dumper, value: dumper.represent_scalar("!function", str(value))
)


@dataclass(frozen=True)
class TaskSpec:
    family: str
    config: str
    split: str
    files: tuple[Path, ...]
    headline: str
    version: str
    shots: tuple[int, ...] = ()
    seeds: tuple[int, ...] = ()
    sampler: str = "hashed"
    label: str = ""  # the task name's middle part when not the family (a curated folder's)
    scannet: str | None = None  # MMIU: the ScanNet copy referenced images are rendered from

    @property
    def name(self) -> str:
        return f"benchsmith_{self.label or self.family}_{self.config}"


@dataclass
class LmmsEvalSummary:
    tasks: list[str] = field(default_factory=list)
    group: str = ""


def task_config(spec: TaskSpec, dataset_dir: Path) -> dict[str, Any]:
    """The task YAML, in lmms-eval's conventions."""
    return {
        "task": spec.name,
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {spec.split: [str(f) for f in spec.files]}},
        "test_split": spec.split,
        "output_type": "generate_until",
        **{name: FunctionRef(f"utils.{name}") for name in FUNCTIONS},
        "lmms_eval_specific_kwargs": {"default": {"pre_prompt": "", "post_prompt": ""}},
        "generation_kwargs": {
            "max_new_tokens": MAX_NEW_TOKENS,
            # no stop string, as predict sends none: without the key lmms-eval stops at its
            # few-shot delimiter "\n\n" (api/task.py) and cuts MULTI's multi-paragraph answers
            "until": [],
            "temperature": 0,
            "do_sample": False,
        },  # fmt: skip
        "metric_list": [
            {
                "metric": metric_name(spec.family, spec.headline),
                "aggregation": FunctionRef("utils.aggregate"),
                "higher_is_better": True,
            }
        ],  # fmt: skip
        "metadata": {
            "version": spec.version,
            "benchsmith_dataset": str(dataset_dir),
            "family": spec.family,
            "config": spec.config,
        },  # fmt: skip
    }


def utils_source(spec: TaskSpec, dataset_dir: Path) -> str:
    """The task's ``utils.py``: one :class:`BenchsmithTask` and its bound functions."""
    names = "\n".join(f"{n} = TASK.{n}" for n in (*FUNCTIONS, "aggregate"))
    return (
        f'"""lmms-eval functions of {spec.name}: written by `benchsmith export lmms-eval`\n'
        "(export again rather than edit). They build the requests `benchsmith predict` sends\n"
        'and score with the family scorer, so benchsmith must be installed here."""\n\n'
        "from benchsmith.exports.lmms_eval_task import BenchsmithTask\n\n"
        f"TASK = BenchsmithTask(dataset_dir={str(dataset_dir)!r}, config={spec.config!r},\n"
        f"                      split={spec.split!r}, shots={spec.shots!r}, seeds={spec.seeds!r},\n"
        f"                      sampler={spec.sampler!r}, scannet={spec.scannet!r})\n\n"
        f"{names}\n"
    )


def dump_yaml(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_TaskDumper, sort_keys=False, allow_unicode=True, width=100)


def write_tasks(specs: list[TaskSpec], dataset_dir: Path, out: Path, family: str
                ) -> LmmsEvalSummary:  # fmt: skip
    """One folder per config under ``out`` (``<config>/<task>.yaml`` + ``utils.py``) and the
    group YAML ``benchsmith_<family>.yaml``; files are replaced atomically, nothing else in
    ``out`` is touched."""
    dataset_dir = Path(dataset_dir).resolve()
    summary = LmmsEvalSummary(group=f"benchsmith_{family}")
    for spec in specs:
        folder = out / spec.config
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "utils.py", utils_source(spec, dataset_dir))
        atomic_write_text(folder / f"{spec.name}.yaml", dump_yaml(task_config(spec, dataset_dir)))
        summary.tasks.append(spec.name)
    group: dict[str, Any] = {"group": summary.group, "task": summary.tasks}
    metrics = sorted({metric_name(spec.family, spec.headline) for spec in specs})
    if metrics:  # the group's line: the plain mean of its tasks' headlines (lmms-eval's "mean",
        # unweighted), as the families average their tasks (MMIU's overall accuracy)
        group["aggregate_metric_list"] = [{"metric": m, "aggregation": "mean",
                                           "weight_by_size": False} for m in metrics]  # fmt: skip
    group["metadata"] = {"version": specs[0].version if specs else ""}
    atomic_write_text(out / f"{summary.group}.yaml", dump_yaml(group))
    return summary
