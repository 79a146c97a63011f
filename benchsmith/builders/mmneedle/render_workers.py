"""What the render's worker processes import, and starting their fork server first.

Why a module of its own: the fork server takes about 0.2 s to import the workers' modules
(numpy, Pillow, the render pool) and load the kernels, and a CLI render's parent takes about
as long to import the render and read the plan. Started from here, before the parent has
imported anything heavy (this module imports only the fork server's module, which imports the
standard library's multiprocessing), the two overlap instead of adding up.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from benchsmith.core.fork_server import start_fork_server

if TYPE_CHECKING:
    from benchsmith.builders.mmneedle.config import RenderConfig

#: what a render worker imports, loaded once in the fork server and inherited by every worker:
#: the render pool's tasks, then what they need loaded (the kernels, Pillow's plugins)
RENDER_MODULES = (
    "benchsmith.builders.mmneedle.render_pool",
    "benchsmith.builders.mmneedle.render_preload",
)


#: the render's setting, for the fork server to check the kernels against Pillow before the
#: first task (see render_preload)
SETTING_VARIABLE = "BENCHSMITH_RENDER_ENGINE_SETTING"


def engine_setting(cfg: RenderConfig) -> tuple[str, float | None, int, int]:
    """What the resize and JPEG engines depend on: (resample, reducing_gap, cell_size, quality)."""
    return (cfg.resample, cfg.reducing_gap, cfg.cell_size, cfg.jpeg_quality)


def start_render_workers_early(cfg: RenderConfig) -> None:
    """When the render will run on local worker processes: start their fork server now, so it
    imports the workers' modules, loads the kernels and checks them against Pillow for this
    render's setting while the caller reads the plan."""
    if cfg.executor == "local" and cfg.workers > 1:
        setting = json.dumps(engine_setting(cfg))
        start_fork_server(RENDER_MODULES, {SETTING_VARIABLE: setting})
