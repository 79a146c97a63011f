"""MMNeedle build settings: the paper's grid, haystack and needle counts plus our knobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import executor_setting, workers_setting
from benchsmith.core.params import section
from benchsmith.core.settings import (
    check_settings,
    nulls_as_defaults,
    output_identity,
    paths_as_paths,
    setting,
    settings_from,
)
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME

ORDERS = ("canonical", "legacy")


@dataclass(frozen=True)
class Setting:
    """One sample config: M images per haystack, N x N grid, K needles."""

    num_images: int
    grid: int
    num_needles: int

    @property
    def name(self) -> str:
        return f"m{self.num_images}_n{self.grid}_k{self.num_needles}"

    @property
    def slots(self) -> int:
        return self.num_images * self.grid * self.grid


@dataclass(frozen=True)
class PlanSettings:
    """What the plan draws (the top of ``mmneedle:``, and ``mmneedle.sizes.<profile>``): the
    paper's settings, their sizes and the order. Each setting is declared once, here: the
    params schema, the ``build mmneedle plan`` flags and the params reference are read from
    it; the sizes' defaults are per profile, and a run without params.yaml builds the sample
    profile's, as every family does (``profile: full`` for the benchmark's 10,000)."""

    order: str = setting(
        "canonical", "canonical: order-independent, no repeated image in a haystack, "
        "unambiguous captions; legacy: replay the original code's random stream (reports its "
        "duplicates and ambiguities)", choices=ORDERS,
    )  # fmt: skip
    grids: tuple[int, ...] = setting((1, 2, 4, 8), "grid sides N", minimum=1, metavar="N")
    haystack_sizes: tuple[int, ...] = setting(
        (1, 10), "images per haystack M", minimum=1, metavar="M"
    )
    needle_counts: tuple[int, ...] = setting(
        (1, 2, 5), "needles per sample K", minimum=1, metavar="K"
    )
    pool_size: int = setting(
        10_000, "stitched images per grid", minimum=1, metavar="N", under="sizes.{profile}",
        profile_defaults={"sample": 20},
    )  # fmt: skip
    samples_per_config: int = setting(
        10_000, "samples per config, half positive", minimum=1, metavar="N",
        aliases=("--samples",), under="sizes.{profile}", profile_defaults={"sample": 10},
    )  # fmt: skip

    def __post_init__(self) -> None:
        for name in ("grids", "haystack_sizes", "needle_counts"):
            if not getattr(self, name):
                raise BenchsmithError(f"mmneedle.{name} is empty", fix=f"list mmneedle.{name} "
                                      "in params.yaml (or pass --" + name.replace("_", "-") + ")")  # fmt: skip
        check_settings(self, "mmneedle")


_PLAN = PlanSettings()  # the declared defaults


@dataclass(frozen=True)
class PlanConfig:
    """Everything that decides the plan (and nothing that only affects rendering): the
    declared :class:`PlanSettings` and the seed, as a plan records them (its defaults are the
    declaration's)."""

    order: str = _PLAN.order
    grids: tuple[int, ...] = _PLAN.grids
    haystack_sizes: tuple[int, ...] = _PLAN.haystack_sizes
    needle_counts: tuple[int, ...] = _PLAN.needle_counts
    pool_size: int = _PLAN.pool_size
    samples_per_config: int = _PLAN.samples_per_config
    seed: int = 0

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise BenchsmithError(
                f"unknown order {self.order!r}", fix="use --order canonical or --order legacy"
            )
        for name, values in (
            ("grids", self.grids),
            ("haystack_sizes", self.haystack_sizes),
            ("needle_counts", self.needle_counts),
        ):
            if not values or any(int(v) < 1 for v in values):
                raise BenchsmithError(
                    f"{name} must be positive integers, got {list(values)}",
                    fix=f"fix mmneedle.{name} in params.yaml",
                )
        if self.pool_size < 1 or self.samples_per_config < 1:
            raise BenchsmithError(
                "pool_size and samples_per_config must be >= 1",
                fix="fix mmneedle.sizes in params.yaml",
            )

    def settings(self) -> list[Setting]:
        """The paper's settings: every (M, N, K) except M=1, N=1 (21 with the defaults)."""
        return [
            Setting(m, n, k)
            for m in sorted(set(self.haystack_sizes))
            for n in sorted(set(self.grids))
            for k in sorted(set(self.needle_counts))
            if not (m == 1 and n == 1)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "grids": list(self.grids),
            "haystack_sizes": list(self.haystack_sizes),
            "needle_counts": list(self.needle_counts),
            "pool_size": self.pool_size,
            "samples_per_config": self.samples_per_config,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> PlanConfig:
        """The config :meth:`to_dict` recorded (build_info ``params.plan``)."""
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})

    @classmethod
    def from_settings(cls, settings: PlanSettings, seed: int) -> PlanConfig:
        """The plan's config: its declared settings (``mmneedle:`` and the flags) and the seed."""
        return cls(settings.order, settings.grids, settings.haystack_sizes,
                   settings.needle_counts, settings.pool_size, settings.samples_per_config,
                   int(seed))  # fmt: skip


RESAMPLE_FILTERS = ("nearest", "box", "bilinear", "hamming", "bicubic", "lanczos")


@dataclass(frozen=True)
class RenderConfig:
    """How stitched images are drawn (``mmneedle.render``); changing a setting that shapes the
    output reruns only render and publish. Each setting is declared once, here: the params
    schema, the ``build mmneedle render`` flags and the params reference are read from it."""

    cell_size: int = setting(
        256, "side of one grid cell in pixels (the original: 256)", minimum=1, metavar="PX"
    )
    jpeg_quality: int = setting(
        75,
        "JPEG quality of the stitched images (75: Pillow's default, as the original)",
        minimum=1,
        maximum=100,
        metavar="Q",
    )
    resample: str = setting(
        "bicubic",
        "Pillow filter a source image is resized with (bicubic: Pillow's default, as the original)",
        choices=RESAMPLE_FILTERS,
    )
    reducing_gap: float | None = setting(
        None,
        "Pillow's reducing_gap: a faster resize, slightly different pixels (null: exact)",
        minimum=1.0,
        metavar="G",
    )
    workers: int = workers_setting(2)
    executor: str = executor_setting("stitched images are drawn")
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_settings(self, "mmneedle.render")

    def identity(self) -> dict[str, Any]:
        """The settings that change pixels (workers and executor do not)."""
        return output_identity(self)

    @classmethod
    def from_params(cls, params: dict[str, Any], **overrides: Any) -> RenderConfig:
        return settings_from(cls, section(params, "mmneedle", "render"), overrides)


@dataclass(frozen=True)
class ImageCheckConfig:
    """How source pictures are compared by their pixels (``mmneedle.image_check``): the twin
    groups found before the plan (``build mmneedle twins``) and the re-check of every haystack
    after it (``build mmneedle check-images``)."""

    near_threshold: int = setting(
        4,
        "64-bit perceptual hashes this many bits apart or fewer count as a near duplicate",
        minimum=0,
        maximum=63,
        metavar="D",
    )
    workers: int = workers_setting(2, "hashing processes")
    executor: str = executor_setting("images are hashed")

    def __post_init__(self) -> None:
        check_settings(self, "mmneedle.image_check")


@dataclass(frozen=True)
class MmneedleSourceFolders:
    """Where the steps read COCO (``mmneedle.sources``; ``benchsmith source prepare coco``
    writes ``data/sources/coco``), as every family names its sources; ``--captions`` and
    ``--images`` still name one file or folder for one run."""

    coco: Path | None = setting(
        Path("data/sources/coco"),
        "COCO 2014 root holding annotations/captions_val2014.json and val2014/",
        metavar="DIR",
    )

    def __post_init__(self) -> None:
        nulls_as_defaults(self)
        paths_as_paths(self)
        check_settings(self, "mmneedle.sources")

    def captions(self, given: Path | None) -> Path:
        return given or self.coco / CAPTIONS_RELPATH

    def images(self, given: Path | None) -> Path:
        return given or self.coco / IMAGES_DIRNAME
