"""MMNeedle build settings: the paper's grid, haystack and needle counts plus our knobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import EXECUTORS
from benchsmith.core.params import profile_of, section

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
class PlanConfig:
    """Everything that decides the plan (and nothing that only affects rendering)."""

    order: str = "canonical"
    grids: tuple[int, ...] = (1, 2, 4, 8)
    haystack_sizes: tuple[int, ...] = (1, 10)
    needle_counts: tuple[int, ...] = (1, 2, 5)
    pool_size: int = 10_000
    samples_per_config: int = 10_000
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
    def from_params(cls, params: dict[str, Any], **overrides: Any) -> PlanConfig:
        """Params file values, then non-None ``overrides`` (CLI flags) on top."""
        mm = section(params, "mmneedle")
        sizes = section(params, "mmneedle", "sizes", profile_of(params))
        values: dict[str, Any] = {
            "order": mm.get("order", cls.order),
            "grids": tuple(mm.get("grids", cls.grids)),
            "haystack_sizes": tuple(mm.get("haystack_sizes", cls.haystack_sizes)),
            "needle_counts": tuple(mm.get("needle_counts", cls.needle_counts)),
            "pool_size": int(sizes.get("pool_size", cls.pool_size)),
            "samples_per_config": int(sizes.get("samples_per_config", cls.samples_per_config)),
            "seed": int(params.get("seed", cls.seed)),
        }
        for key, value in overrides.items():
            if value is not None:
                values[key] = tuple(value) if isinstance(value, list) else value
        return cls(**values)


RESAMPLE_FILTERS = ("nearest", "box", "bilinear", "hamming", "bicubic", "lanczos")


@dataclass(frozen=True)
class RenderConfig:
    """How stitched images are drawn; changing any of these reruns only render and publish."""

    cell_size: int = 256
    jpeg_quality: int = 75
    resample: str = "bicubic"
    reducing_gap: float | None = None
    workers: int = 2
    executor: str = "local"  # or "ray": where the tasks run; never what they produce
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise BenchsmithError(
                f"unknown executor {self.executor!r}", fix=f"use one of {', '.join(EXECUTORS)}"
            )
        if self.resample not in RESAMPLE_FILTERS:
            raise BenchsmithError(
                f"unknown resample filter {self.resample!r}",
                fix=f"use one of {', '.join(RESAMPLE_FILTERS)}",
            )
        if not 1 <= self.jpeg_quality <= 100:
            raise BenchsmithError(f"jpeg_quality must be 1..100, got {self.jpeg_quality}")
        if self.cell_size < 1:
            raise BenchsmithError(f"cell_size must be >= 1, got {self.cell_size}")

    def identity(self) -> dict[str, Any]:
        """The fields that change pixels (workers and executor do not)."""
        return {
            "cell_size": self.cell_size,
            "jpeg_quality": self.jpeg_quality,
            "resample": self.resample,
            "reducing_gap": self.reducing_gap,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any], **overrides: Any) -> RenderConfig:
        render = section(params, "mmneedle", "render")
        values: dict[str, Any] = {
            "cell_size": int(render.get("cell_size", cls.cell_size)),
            "jpeg_quality": int(render.get("jpeg_quality", cls.jpeg_quality)),
            "resample": str(render.get("resample", cls.resample)),
            "reducing_gap": render.get("reducing_gap", cls.reducing_gap),
            "workers": int(render.get("workers", cls.workers)),
            "executor": str(render.get("executor", cls.executor)),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
