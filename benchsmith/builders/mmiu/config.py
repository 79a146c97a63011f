"""MMIU build settings: which tasks, how many items, how frames are chosen, how options look.

Every field has the ``mmiu:`` key of ``params.yaml`` that sets it. ``full`` sizes are the
release's (200 items per stored task); ``sample`` sizes fit the miniature ScanNet scenes and
COCO images the sources' sample writers produce, so the default profile builds offline.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import executor_setting, workers_setting
from benchsmith.core.params import section
from benchsmith.core.settings import (
    check_settings,
    nulls_as_defaults,
    paths_as_paths,
    setting,
    settings_from,
)
from benchsmith.family.publish_settings import PublishSettings

SCANNET_TASKS = (
    "3d_pose_estimation",
    "3d_scene_reconstruction",
    "3d_depth_estimation",
    "3d_object_detection",
    "visual_correspondence_scannet",
)
COCO_TASKS = ("jigsaw_puzzle_solving", "image_spatial_transformation_estimation")
TASKS = SCANNET_TASKS + COCO_TASKS
RELATIONSHIPS = (
    "Low-level-semantic",
    "High-level-obj-semantic",
    "High-level-sub-semantic",
    "Discrete-temporal",
    "Continuous-temporal",
    "2D-spatial",
    "3D-spatial",
)
TASK_RELATIONSHIP = {
    "3d_pose_estimation": "3D-spatial",
    "3d_scene_reconstruction": "3D-spatial",
    "3d_depth_estimation": "3D-spatial",
    "3d_object_detection": "3D-spatial",
    "visual_correspondence_scannet": "High-level-obj-semantic",
    "jigsaw_puzzle_solving": "2D-spatial",
    "image_spatial_transformation_estimation": "2D-spatial",
}
TASK_ABBR = {
    "3d_pose_estimation": "3DPE",
    "3d_scene_reconstruction": "3DSR",
    "3d_depth_estimation": "3DE",
    "3d_object_detection": "3DOD",
    "visual_correspondence_scannet": "VCor",
    "jigsaw_puzzle_solving": "JPS",
    "image_spatial_transformation_estimation": "ISTE",
}
MODES = ("rebuild", "ingest")
PROFILES = ("sample", "full")
SCANNET_IMAGES = ("reference", "embed")
SCENE_SPLITS = ("all", "train", "val", "test")


def _error(key: str, message: str) -> BenchsmithError:
    return BenchsmithError(f"mmiu.{key}: {message}", path="params.yaml", fix=f"correct mmiu.{key}")


def _frame(full: Any, help: str, sample: Any = None, **bounds: Any) -> Any:
    """A key of ``mmiu.frames.<profile>``: ``full``'s default, and the sample profile's when it
    differs (the miniature scenes are short: 30 frames, a small room)."""
    return setting(full, help, flag=False, under="{profile}",
                   profile_defaults=None if sample is None else {"sample": sample}, **bounds)  # fmt: skip


@dataclass(frozen=True)
class FrameChoice:
    """How ScanNet frames become items (``mmiu.frames.<profile>``).

    A *pair* is frames ``i`` and ``i + stride`` (frame numbers of the stream) whose relative
    motion lies within the limits and whose views overlap: at least ``min_overlap`` of frame
    i's valid depth pixels, moved into frame j with the poses, land inside frame j at the depth
    frame j measures there (within ``depth_tolerance_m``). A *distractor frame* of the same
    scene is at least ``distractor_min_translation_m`` or ``distractor_min_rotation_deg`` away
    from every frame of the item.
    """

    stride: int = _frame(10, "frames i and i + stride make a pair", 2, minimum=1)
    min_translation_m: float = _frame(0.02, "least camera motion of a pair, metres", minimum=0.0)
    max_translation_m: float = _frame(0.5, "most camera motion of a pair, metres", 0.3, minimum=0.0)
    max_rotation_deg: float = _frame(
        20.0, "most camera rotation of a pair, degrees", minimum=0.0, maximum=180.0
    )
    min_overlap: float = _frame(
        0.5, "share of frame i's depth pixels that must land in frame j", minimum=0.0, maximum=1.0
    )
    depth_tolerance_m: float = _frame(
        0.05, "how far a moved depth pixel may be from frame j's depth, metres", minimum=0.0
    )
    distractor_min_translation_m: float = _frame(
        0.3, "a distractor frame is at least this far (metres) from every frame of the item...",
        0.25, minimum=0.0,
    )  # fmt: skip
    distractor_min_rotation_deg: float = _frame(
        15.0, "... or turned at least this much (degrees)", minimum=0.0, maximum=180.0
    )

    def __post_init__(self) -> None:
        check_settings(self, "mmiu.frames")  # 15 in params.yaml is 15.0: one hash

    def validate(self, key: str) -> None:
        if self.stride < 1:
            raise _error(f"{key}.stride", "must be >= 1")
        if not 0 <= self.min_translation_m <= self.max_translation_m:
            raise _error(key, "needs 0 <= min_translation_m <= max_translation_m")
        if not 0 < self.min_overlap <= 1:
            raise _error(f"{key}.min_overlap", "must be in (0, 1]")


DEFAULT_FRAMES = {
    profile: settings_from(FrameChoice, None, profile=profile) for profile in PROFILES
}
DEFAULT_ITEMS = {"sample": 12, "full": 200}


@dataclass(frozen=True)
class OptionStyle:
    """How options are written (``mmiu.options``): every option of an item alike."""

    n_options: int = setting(4, "options per item", minimum=2, maximum=9, flag=False)
    pose_decimals: int = setting(
        3, "decimals of a pose option (metres to millimetres; rotation entries to 1e-3)",
        minimum=1, maximum=9, flag=False,
    )  # fmt: skip
    box_decimals: int = setting(2, "decimals of a box option", minimum=1, maximum=6, flag=False)
    box_max_iou: float = setting(
        0.25, "a distractor box overlaps its gold box at most this much (IoU)", minimum=0.0,
        maximum=1.0, flag=False,
    )  # fmt: skip
    depth_display_max_m: float = setting(
        6.0, "depth maps are shown as 8-bit grey from 0 to this many metres", minimum=0.1,
        flag=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "mmiu.options")


@dataclass(frozen=True)
class ScenePlanSettings:
    """Where the plan surveys ScanNet frames (``mmiu.plan``): one task per scene, and a folder
    that keeps each finished scene's frame pairs so a killed plan resumes from them. None of
    them changes a byte of the plan."""

    executor: str = executor_setting("ScanNet frames are surveyed (one task per scene)")
    workers: int = workers_setting(2, every_core=True)
    cache_dir: str | None = setting(
        ".benchsmith/scannet-pairs", "where each finished scene's frame pairs are kept, so a "
        "killed plan resumes from them", metavar="DIR", shapes_output=False,
        aliases=("--pairs-cache",),
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "mmiu.plan")


@dataclass(frozen=True)
class MmiuPublishSettings(PublishSettings):
    """How ``publish mmiu`` writes (``mmiu.publish``): the shared ``out`` and shard size, how
    ScanNet images are published, and where the images are rendered (the same bytes on any
    executor)."""

    scannet_images: str = setting(
        "reference", "reference: ScanNet images as scene/frame/sha256 (shareable); embed: bytes "
        "(private use)", choices=SCANNET_IMAGES,
    )  # fmt: skip
    executor: str = executor_setting("images are rendered (a few rows per task)")
    workers: int = workers_setting(2, every_core=True)


@dataclass(frozen=True)
class ShortcutGate:
    """When the shortcut check fails a config (``mmiu.shortcuts``): a blind rule fails it when
    even the lower bound of its accuracy beats chance by more than ``max_gain`` (so small
    configs are judged on evidence, not noise); configs listed in ``allow`` are reported but do
    not fail. Each setting is declared once, here: the params schema, the ``build mmiu check``
    flags and the params reference are read from it."""

    max_gain: float = setting(
        0.02, "how far above chance a blind rule may answer before the config fails",
        minimum=0.0, maximum=1.0, metavar="GAIN",
    )  # fmt: skip
    confidence: float = setting(
        0.99, "confidence of the one-sided Wilson lower bound a rule's accuracy is judged by",
        minimum=0.5, maximum=0.9999, metavar="P",
    )  # fmt: skip
    allow: tuple[str, ...] = setting(
        (), "tasks published even when they fail the gate (their card says so)", choices=TASKS,
        metavar="TASK",
    )  # fmt: skip
    text_only_model: str | None = setting(
        None, "an LLM also asked each item's question and options without its images "
        "(null: the rules alone)", metavar="MODEL",
    )  # fmt: skip
    base_url: str | None = setting(
        None, "the OpenAI-compatible server of the text-only model (null: $OPENAI_BASE_URL; "
        "the key is read from $OPENAI_API_KEY only)", metavar="URL", shapes_output=False,
    )  # fmt: skip
    cache_dir: str | None = setting(
        ".benchsmith/llm-cache", "where the text-only model's replies are cached",
        metavar="DIR", shapes_output=False, aliases=("--llm-cache",),
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self, "mmiu.shortcuts")

    @classmethod
    def from_params(cls, params: dict[str, Any], **overrides: Any) -> ShortcutGate:
        return settings_from(cls, section(params, "mmiu", "shortcuts"), overrides)


@dataclass(frozen=True)
class MmiuPlanSettings:
    """What the plan builds (the top of ``mmiu:``, and ``mmiu.sizes.<profile>``); where it
    surveys ScanNet is :class:`ScenePlanSettings`. Each setting is declared once, here: the
    params schema, the ``build mmiu plan`` flags and the params reference are read from it."""

    mode: str = setting(
        "rebuild", "rebuild: our construction from ScanNet and COCO; ingest: read the official "
        "MMIU release into the same schema and flag its known faults", choices=MODES,
    )  # fmt: skip
    tasks: tuple[str, ...] = setting(TASKS, "tasks to build", choices=TASKS, metavar="TASK")
    seed: int | None = setting(None, "build seed (null: the top-level seed)", minimum=0,
                               metavar="S")  # fmt: skip
    scene_split: str = setting(
        "all", "the scenes items come from: all of scans/, or a ScanNet split list (train, val, "
        "test)", choices=SCENE_SPLITS,
    )  # fmt: skip
    jigsaw_grid: int = setting(2, "jigsaw pieces per side (2: a 2x2 puzzle)", minimum=2,
                               maximum=4, metavar="N")  # fmt: skip
    items_per_task: int = setting(
        DEFAULT_ITEMS["full"], "items per task", minimum=1, metavar="N", under="sizes.{profile}",
        profile_defaults={"sample": DEFAULT_ITEMS["sample"]},
    )  # fmt: skip

    def __post_init__(self) -> None:
        if not self.tasks:
            raise _error("tasks", "name at least one task")
        check_settings(self, "mmiu")


@dataclass(frozen=True)
class MmiuSourceFolders:
    """Where the plan reads (``mmiu.sources``; ``data/sources/*`` is written by the source
    stages); a flag names another folder for one run."""

    scannet: Path | None = setting(
        Path("data/sources/scannet/ScanNet"), "ScanNet v2 root holding scans/ and "
        "scannetv2-labels.combined.tsv", metavar="DIR",
    )  # fmt: skip
    coco: Path | None = setting(Path("data/sources/coco"), "COCO root holding annotations/ and "
                                "val2014/", metavar="DIR")  # fmt: skip
    ingest_dir: Path | None = setting(
        None, "the unzipped official release (all.parquet and the relationship image folders), "
        "for mode: ingest", metavar="DIR",
    )  # fmt: skip

    def __post_init__(self) -> None:
        nulls_as_defaults(self)
        paths_as_paths(self)
        check_settings(self, "mmiu.sources")


_TOP = MmiuPlanSettings()  # the declared defaults


@dataclass(frozen=True)
class MmiuConfig:
    """What the plan builds, as it records it: the declared :class:`MmiuPlanSettings` (its
    defaults are the declaration's, the sample profile's size), the frames and options."""

    mode: str = _TOP.mode
    profile: str = "sample"
    seed: int = 0
    tasks: tuple[str, ...] = _TOP.tasks
    items_per_task: int = DEFAULT_ITEMS["sample"]
    scene_split: str = _TOP.scene_split
    frames: FrameChoice = field(default_factory=FrameChoice)
    options: OptionStyle = field(default_factory=OptionStyle)
    jigsaw_grid: int = _TOP.jigsaw_grid

    @classmethod
    def from_params(
        cls,
        settings: dict[str, Any],
        profile: str,
        *,
        seed: int | None = None,
        tasks: list[str] | None = None,
        mode: str | None = None,
    ) -> MmiuConfig:
        """The config from the ``mmiu:`` block (already schema-checked), the given values
        winning."""
        top = settings_from(MmiuPlanSettings, settings, {"seed": seed, "tasks": tasks,
                                                         "mode": mode}, profile)  # fmt: skip
        return cls.from_settings(top, settings, profile, top.seed or 0)

    @classmethod
    def from_settings(
        cls, top: MmiuPlanSettings, settings: dict[str, Any], profile: str, seed: int
    ) -> MmiuConfig:
        """The config from the declared settings ``top`` (``mmiu:`` and the flags), the
        per-profile frames and the options of the ``mmiu:`` block ``settings``, and ``seed``."""
        if profile not in PROFILES:
            raise BenchsmithError(f"unknown profile {profile!r}", fix="profile: sample or full")
        frames = settings_from(FrameChoice, settings.get("frames"), profile=profile)
        frames.validate(f"frames.{profile}")
        return cls(
            mode=top.mode,
            profile=profile,
            seed=int(seed),
            tasks=tuple(t for t in TASKS if t in top.tasks),
            items_per_task=top.items_per_task,
            scene_split=top.scene_split,
            frames=frames,
            options=settings_from(OptionStyle, settings.get("options")),
            jigsaw_grid=top.jigsaw_grid,
        )

    def as_dict(self) -> dict[str, Any]:
        """Everything that shapes the items (recorded in build_info and its hash)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if hasattr(value, "__dataclass_fields__"):
                value = {g.name: getattr(value, g.name) for g in fields(value)}
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


def config_from_dict(values: dict[str, Any]) -> MmiuConfig:
    """The config recorded in ``build_info.json`` (:meth:`MmiuConfig.as_dict`), rebuilt."""
    nested = {"frames": FrameChoice, "options": OptionStyle}
    kwargs: dict[str, Any] = {}
    for f in fields(MmiuConfig):
        value = values[f.name]
        if f.name in nested:
            value = nested[f.name](
                **{k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
            )
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[f.name] = value
    return MmiuConfig(**kwargs)
