"""Render throughput benchmark: its settings and one grid's inputs (source folder + plan).

Shared by ``render_throughput.py`` (the driver), ``render_baselines.py`` (the references it
times ours against) and ``render_report.py`` (the tables). Only light modules are imported at
module level: forkserver workers re-run the benchmark script's imports (see
``render_throughput.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from synthetic_coco import write_synthetic_coco

WORKERS = 2
CELL = 256
QUALITY = 75
SPEEDUP_TARGET = 3.0
OVERHEAD_TARGET = 1.3
#: outputs compared pixel by pixel (all outputs are compared by sha256)
CHECK_FIRST = 3

#: grid -> (source images S, pool size P). Canonical pools cut P stitched images out of
#: successive permutations of the S sources, so each source fills P * N^2 / S = 20 cells, as
#: in the full build (10,000-image pools for N = 1, 2, 4, 8 share one cell cache: 850k cells
#: over ~40.5k COCO val images, ~21 cells each).
FULL_SIZES = {4: (400, 500), 8: (320, 100)}
QUICK_SIZES = {4: (96, 120), 8: (128, 40)}


@dataclass
class GridCase:
    """One grid's inputs: its own source folder and plan (grids are timed independently)."""

    grid: int
    n_sources: int
    pool_size: int
    images_dir: Path
    plan_dir: Path
    cells: list[list[tuple[int, int, str]]]  # per stitched image: (row, col, file_name), 1-based

    @property
    def cell_uses(self) -> float:
        return self.pool_size * self.grid**2 / self.n_sources

    def source_names(self) -> list[str]:
        """Every source file the plan uses, once, sorted."""
        return sorted({name for cells in self.cells for _, _, name in cells})


def prepare_case(work: Path, grid: int, n_sources: int, pool_size: int) -> GridCase:
    """Synthetic COCO source + canonical plan for one grid, as ``benchsmith mmneedle plan``."""
    import polars as pl

    from benchsmith.builders.mmneedle.config import PlanConfig
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.sources.coco.reader import read_captions

    coco = write_synthetic_coco(work / f"coco_n{grid}", n_sources, seed=grid)
    source = read_captions(coco.captions_path)
    config = PlanConfig(
        order="canonical",
        grids=(grid,),
        haystack_sizes=(1,),
        needle_counts=(1,),
        pool_size=pool_size,
        samples_per_config=2,
        seed=0,
    )
    plan_dir = work / f"plan_n{grid}"
    write_plan(plan_mmneedle(source, config), source, plan_dir, coco.images_dir)
    frame = pl.read_parquet(plan_dir / "pools" / f"n{grid}.parquet")
    cells = [[(c["row"], c["col"], c["file_name"]) for c in row] for row in frame["cells"]]
    return GridCase(grid, n_sources, pool_size, coco.images_dir, plan_dir, cells)
