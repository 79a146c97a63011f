"""Shared fixtures: miniature COCO and ScanNet sources in their real formats, one MMNeedle build
and one MMIU plan per run, and how tests are spread over ``pytest -n N`` workers.

The session fixtures that build something are built once per run, not once per worker:
:func:`shared_build` builds under a file lock in the run's shared temporary folder, and the other
workers reuse what the first one built. They are read-only for tests (copy before changing).

The sample pipeline is built once per run, by the README's first command in a fresh checkout
(:mod:`fresh_checkout`); the tests that read published folders of every family read a copy of
that build (:func:`sample_project`), so the suite builds the pipeline once, not twice.

Workers take whole test files (a file's module fixtures are built once), except one group that
crosses files: every test on the local Ray cluster (one Ray per run, not one per worker). A
scheduler of our own (:func:`pytest_xdist_make_scheduler`) reads each test's group from the
workers. The build starts first, on one worker, while the other runs what does not read it
(:func:`group_rank`).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

# benchsmith is imported inside the fixtures: the process that only runs the workers loads
# this file too, and stays small without the build dependencies.

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _offline_hf(monkeypatch, tmp_path_factory):
    """Keep `datasets` offline and its cache inside the test's temporary space."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.getbasetemp() / "hf_home"))


def uses_ray(item) -> bool:
    """The test starts work on the local Ray: it asks for ``ray_cluster``, or is the ``ray``
    case of a test parametrised over executors (which asks for it from inside)."""
    if "ray_cluster" in getattr(item, "fixturenames", ()):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(v == "ray" or (isinstance(v, list | tuple) and "ray" in v) for v in params.values())


def reads_the_build(item) -> bool:
    """The test reads the sample pipeline's build (the fresh checkout or its copy)."""
    return "fresh_checkout" in getattr(item, "fixturenames", ())


def group_of(item) -> str:
    """What a worker takes at once: the test's file, or every test on the local Ray (one Ray
    per run), whatever their files."""
    return "ray" if uses_ray(item) else item.nodeid.split("::")[0]


GROUPS_ENV = "BENCHSMITH_TEST_GROUPS"  # the folder where workers tell the scheduler the groups


def pytest_configure(config):
    """Bytecode is cached for this run, whatever ``PYTHONDONTWRITEBYTECODE`` says: a suite that
    starts a hundred ``benchsmith`` processes (and two workers that import every test module)
    would otherwise compile the same sources each time (9 s of collection per worker instead of
    5 here). And in the process that runs workers: a folder for their test -> group maps (a
    worker gets both when it starts, after this)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # the DVC projects tests make with `dvc init` would otherwise start an analytics daemon per
    # command (it tries dvc.org and fails offline: 0.7 s of CPU each); the repo's own
    # `.dvc/config` already says `analytics = false`
    os.environ["DVC_NO_ANALYTICS"] = "1"
    sys.dont_write_bytecode = False
    _safe_load_with_libyaml()
    if config.getoption("numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER"):
        import tempfile

        os.environ[GROUPS_ENV] = tempfile.mkdtemp(prefix="benchsmith-test-groups-")


def _safe_load_with_libyaml() -> None:
    """``yaml.safe_load`` in this run parses with libyaml (PyYAML's C parser, in its wheel),
    with the same safe constructors. Why: ``datasets.load_dataset`` reads a card's front
    matter through huggingface_hub's ``yaml.safe_load``, and a card's ``dataset_info`` (every
    config's features) is 40 KB of YAML: 0.3 s a load in pure Python, a few ms in C, for the
    hundreds of loads this suite makes. What is parsed, and so every assertion, is the same;
    benchsmith's own YAML reads pick libyaml themselves (``core.params``, ``hf.reader``)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        yaml.safe_load = lambda stream: yaml.load(stream, Loader=loader)  # noqa: S506


def pytest_unconfigure(config):
    """The scheduler's folder goes; old runs' temporary folders are removed in the background
    (:mod:`old_temp_dirs`: pytest would remove them in the foreground, 13 s after the last
    test)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if os.environ.get(GROUPS_ENV):
        shutil.rmtree(os.environ.pop(GROUPS_ENV), ignore_errors=True)
    factory = getattr(config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is not None and config.option.basetemp is None:  # a numbered run folder
        from old_temp_dirs import defer_removal

        defer_removal(basetemp.parent, int(config.getini("tmp_path_retention_count")))


# The group that starts the sample build (one `dvc repro` of the whole pipeline, ~95 s alone):
# first, so one worker builds while the other runs the groups that do not read the build.
STARTS_THE_BUILD = "tests/test_dvc_deps.py"
# Among the others, the longest first (seconds on 2 cores, measured 2026-11-28 with a per-test
# timeline): a worker that takes a long one late finishes alone while the other idles (the
# report pages, 14 s, once ran last on one worker while the other had been idle for 14 s).
LONGEST_FIRST = (
    "tests/builders/mmiu/test_publication.py",  # 44 (its Ray cases run with the Ray group)
    "tests/test_fresh_checkout.py",  # 43: re-runs of the pipeline in a copy
    "tests/commands/test_curate_stage_combinations.py",  # 30
    "tests/publish/test_audit_mutations.py",  # 29
    "tests/builders/mmiu/test_scene_survey.py",  # 25: a plan killed and resumed
    "tests/publish/test_push.py",  # 20
    "tests/test_wheel.py",  # 20: builds and installs a wheel
    "tests/test_docs_commands.py",  # 19
    "tests/builders/mmneedle/test_render.py",  # 17
    "tests/test_contracts.py",  # 17
    "tests/exports/test_lmms_eval.py",  # 17
    "tests/publish/test_audit_folder.py",  # 15
    "tests/builders/multi/test_convert.py",  # 14
    "tests/report/test_build.py",  # 14: four report pages
    "tests/family/test_a_new_family.py",  # 14
    "tests/builders/mmneedle/test_canonical_kernel.py",  # 13
    "tests/commands/test_export.py",  # 12
    "tests/builders/vlicl/test_audit.py",  # 11
    "tests/test_cli.py",  # 10
    "tests/images/test_ocr_rapidocr.py",  # 9
    "tests/builders/mmneedle/test_image_check.py",  # 8
    "tests/sources/test_base.py",  # 7
    "tests/builders/vlicl/test_publication.py",  # 7
    "tests/publish/test_croissant.py",  # 7
    "tests/commands/test_curate.py",  # 6
    "tests/builders/mmneedle/test_audit.py",  # 6
    "tests/report/test_browser.py",  # 6
    "tests/sources/exams/test_page_reader.py",  # 5: the reader on the build's OCR reads
)


# The Ray group's tests whose Ray workers load a model (RapidOCR, about 0.5 GB): last in the
# group, so that the local Ray, and the idle worker that keeps the model, stops right after them
# (pytest_runtest_teardown) instead of holding it while the other workers' tests run.
LAST_ON_RAY = (
    "tests/builders/multi/test_convert.py::test_pages_read_on_ray_give_the_same_records",
)


def group_rank(group: str, reads_build: bool) -> tuple[int, int]:
    """The build first; then the groups that do not read it (the other worker's work while
    it is made), longest first; then the local Ray's group (some of it reads the build); then
    the groups that read it, longest first."""
    longest = LONGEST_FIRST.index(group) if group in LONGEST_FIRST else len(LONGEST_FIRST)
    if group == STARTS_THE_BUILD:
        return (0, 0)
    if group == "ray":
        return (2, 0)
    return (3 if reads_build else 1, longest)


def pytest_collection_modifyitems(config, items):
    """Groups in :func:`group_rank` order (the same in every worker), and in a group the tests
    that read the build last (and :data:`LAST_ON_RAY` after them); under workers, each worker
    writes which group each test belongs to."""
    reading = {group_of(item) for item in items if reads_the_build(item)}
    items.sort(key=lambda item: (group_rank(group_of(item), group_of(item) in reading),
                                 reads_the_build(item), item.nodeid in LAST_ON_RAY))  # fmt: skip
    folder, worker = os.environ.get(GROUPS_ENV), os.environ.get("PYTEST_XDIST_WORKER")
    if folder and worker:
        groups = {item.nodeid: group_of(item) for item in items}
        partial = Path(folder, f"{worker}.json.partial")
        partial.write_text(json.dumps(groups), encoding="utf-8")
        partial.replace(Path(folder, f"{worker}.json"))


def pytest_runtest_teardown(item, nextitem):
    """The local Ray stops after the last test of its group (they run one after another, on one
    worker): its idle workers keep what their tasks loaded (OCR models, about 0.5 GB each),
    which nothing after them needs."""
    if uses_ray(item) and (nextitem is None or not uses_ray(nextitem)) and "ray" in sys.modules:
        import ray

        if ray.is_initialized():
            ray.shutdown()


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a run without workers never calls it
def pytest_xdist_make_scheduler(config, log):
    """Workers take whole groups (:func:`group_of`) in collection order: a file's module
    fixtures are built once, and one local Ray serves every Ray test."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep collection order: longest first
            self._groups: dict[str, str] = {}

        def _split_scope(self, nodeid: str) -> str:
            if not self._groups:  # every worker has collected (and written) by now
                for written in Path(os.environ[GROUPS_ENV]).glob("*.json"):
                    self._groups.update(json.loads(written.read_text(encoding="utf-8")))
            return self._groups.get(nodeid) or nodeid.split("::")[0]

    return GroupScheduling(config, log)


def shared_build(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """``build(folder)`` run once per test run, whatever the number of workers: the first to
    ask builds under a lock in the run's shared temporary folder; the others wait and reuse it.
    A build that failed half-way is removed and made again by the next one to ask.

    A worker sees the build through a link in its own temporary folder, so it sits as deep as
    the worker's other temporary folders, as it does without workers: relative roots recorded
    in a build (a plan's ``../../shared-coco/coco``) still hold in a copy a test makes."""
    basetemp = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    root = basetemp.parent if worker else basetemp  # the folder every worker's basetemp is in
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    seen = basetemp / f"shared-{name}" if worker else folder
    if worker and not seen.is_symlink():
        seen.symlink_to(folder, target_is_directory=True)
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(seen)
            done.touch()
    return seen


@pytest.fixture(autouse=True, scope="module")
def _return_memory_after_each_file():
    """A worker runs a hundred test files in one process. What a file freed is handed back to
    the system when the file ends (glibc and Arrow's allocator keep freed memory for reuse
    otherwise), so a worker's peak is the largest file's, not the sum of every file's
    leftovers. (A local pool's fork server, 90 MB, is kept: stopping it after each file cost
    45 s of CPU in restarts over the run for 0.17 GB less at the peak.)"""
    yield
    import contextlib
    import ctypes
    import gc

    gc.collect()
    gc.freeze()  # what outlives a file is not looked at again by every later collection
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to hand back
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def pytest_collection_finish(session):
    """Everything collection imported (every test module, most of benchsmith and its
    libraries: a million objects in a worker) lives to the end of the run: frozen out of the
    garbage collector, each later collection walks only what tests made since, not the whole
    heap again (0.2-0.6 s a walk)."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def sample_coco(tmp_path_factory) -> Path:
    """A 660-image miniature COCO 2014 val (read-only for tests: copy before changing it)."""
    from benchsmith.sources.coco.sample import write_sample_coco

    folder = shared_build(tmp_path_factory, "coco",
                          lambda f: write_sample_coco(f / "coco", n_images=660, seed=0))  # fmt: skip
    return folder / "coco"


@pytest.fixture(scope="session")
def fresh_checkout(tmp_path_factory):
    """The project's files copied to another path and built by `dvc repro` on a bare machine,
    every stage's imports traced; once per run, whatever the number of workers (read-only:
    tests that re-run stages copy it)."""
    from fresh_checkout import build_fresh_checkout, load_fresh_checkout

    return load_fresh_checkout(shared_build(tmp_path_factory, "fresh", build_fresh_checkout))


@pytest.fixture(scope="session")
def sample_project(tmp_path_factory, fresh_checkout) -> Path:
    """The whole sample pipeline, as the fresh checkout's `dvc repro` built it, in a copy of
    its own (read-only for tests)."""
    from project_fixtures import copy_sample_project

    folder = shared_build(tmp_path_factory, "project",
                          lambda f: copy_sample_project(fresh_checkout.path, f / "project"))  # fmt: skip
    return folder / "project"


@pytest.fixture(scope="session")
def built(tmp_path_factory, sample_coco) -> dict[str, Path]:
    """plan -> render -> publish of the sample profile sizes (pool 20, 10 samples per config)."""
    from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.builders.mmneedle.publication import MmneedlePublication
    from benchsmith.builders.mmneedle.render import render_mmneedle
    from benchsmith.publish.publisher import publish
    from benchsmith.sources.coco.reader import read_captions

    def build(root: Path) -> None:
        captions = sample_coco / "annotations" / "captions_val2014.json"
        source = read_captions(captions)
        plan_dir, render_dir = root / "plan", root / "render"
        write_plan(
            plan_mmneedle(source, PlanConfig(pool_size=20, samples_per_config=10)),
            source,
            plan_dir,
            sample_coco / "val2014",
        )
        render_mmneedle(plan_dir, render_dir, RenderConfig(workers=1))
        publish(MmneedlePublication(plan_dir, render_dir), root / "published", "1.2.3")

    root = shared_build(tmp_path_factory, "mmneedle", build)
    return {
        "root": root,
        "coco": sample_coco,
        "captions": sample_coco / "annotations" / "captions_val2014.json",
        "plan": root / "plan",
        "render": root / "render",
        "published": root / "published",
    }


def write_reference_captions(path: Path) -> Path:
    """COCO-format captions file ordered like the real one, from the shipped reference rows."""
    with gzip.open(
        FIXTURES / "coco_val2014_last_captions.jsonl.gz", "rt", encoding="utf-8"
    ) as handle:
        rows = [json.loads(line) for line in handle]
    data = {
        "images": [
            {
                "id": r["image_id"],
                "file_name": r["file_name"],
                "license": 1,
                "width": 640,
                "height": 480,
            }
            for r in rows
        ],
        "annotations": [
            {"id": k + 1, "image_id": r["image_id"], "caption": r["caption"]}
            for k, r in enumerate(rows)
        ],
        "licenses": [{"id": 1, "name": "Attribution-NonCommercial-ShareAlike License", "url": ""}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def mmiu_sources(tmp_path_factory, sample_coco):
    """Two ray-cast ScanNet scenes (30 frames each, frame 6 with a -inf pose) and the COCO
    miniature, as ``MmiuSources`` (read-only: copy before changing)."""
    from benchsmith.builders.mmiu.plan import MmiuSources
    from benchsmith.sources.scannet.sample import write_sample_scannet

    folder = shared_build(tmp_path_factory, "scannet",
                          lambda f: write_sample_scannet(f / "ScanNet", n_scenes=2))  # fmt: skip
    return MmiuSources(scannet=folder / "ScanNet", coco=sample_coco)


@pytest.fixture(scope="session")
def mmiu_plan(tmp_path_factory, mmiu_sources) -> Path:
    """The sample-profile plan of every task (12 items each)."""
    from benchsmith.builders.mmiu.config import MmiuConfig
    from benchsmith.builders.mmiu.plan import build_mmiu

    folder = shared_build(tmp_path_factory, "mmiu_plan",
                          lambda f: build_mmiu(MmiuConfig.from_params({}, "sample"), mmiu_sources,
                                               f / "plan"))  # fmt: skip
    return folder / "plan"


@pytest.fixture(scope="session")
def multi_build(sample_project) -> dict[str, Path]:
    """The sample project's MULTI build, made by the pipeline's own commands: the exam sources,
    the OCR step's records (and its cache, filled by that first, cold run), the questions, the
    plan and the published folder."""
    exams = sample_project / "data" / "sources" / "exams"
    data = sample_project / "data" / "multi"
    return {"root": sample_project, "exams": exams, "release": exams / "release",
            "converted": data / "converted", "questions": data / "questions",
            "plan": data / "plan", "published": sample_project / "published" / "multi",
            "cache": sample_project / ".benchsmith" / "ocr-cache"}  # fmt: skip


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray (2 CPUs, a small object store) shared by every test that runs on Ray; the
    executors see it running and leave it up."""
    import ray  # the ray extra is part of [dev]: a missing Ray is a failure, not a skip

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage reports

    ray.init(
        num_cpus=2,
        object_store_memory=256 * 1024**2,
        include_dashboard=False,
        logging_level="ERROR",
    )
    yield ray
    ray.shutdown()
