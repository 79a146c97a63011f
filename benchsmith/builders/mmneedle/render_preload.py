"""What the render's workers need loaded, loaded when this module is imported.

Why a module: a fork server preloads modules by name, and what its workers inherit they never
load themselves. The render's fork server imports this module (see
:mod:`benchsmith.builders.mmneedle.render_workers`), so each of these is done once there
instead of once in every worker, at its first image:

* the resize and mosaic kernels, as native code (:mod:`benchsmith.core.native_kernels`:
  milliseconds when cached; built there, while the parent reads the plan, when not);
* Pillow's image plugins (``Image.preinit``: its first encode or decode imports them) and
  ``numpy.random``: 18 ms of each worker's first task before;
* the check of the kernels against the installed Pillow (``render_engines``), for the setting
  the render's parent passes in ``BENCHSMITH_RENDER_ENGINE_SETTING``
  (:func:`~benchsmith.builders.mmneedle.render_workers.start_render_workers_early`): its
  verdicts are cached per process, and a worker forked afterwards has them. Run in a fresh
  worker instead, the same check took 30-45 ms (every page it touched copied on write) while
  the parent waited for its first answer.

Nothing else imports it: the render's parent never loads a kernel.
"""

from __future__ import annotations

import contextlib
import json
import os

import numpy.random  # noqa: F401 - imported for the workers
from PIL import Image

from benchsmith.builders.mmneedle.jpeg_mosaic import KERNELS as MOSAIC_KERNELS
from benchsmith.builders.mmneedle.render_pool import render_engines
from benchsmith.builders.mmneedle.render_workers import SETTING_VARIABLE
from benchsmith.builders.mmneedle.resample import KERNELS as RESAMPLE_KERNELS
from benchsmith.core.native_kernels import load_kernels

mosaic_kernels = load_kernels(MOSAIC_KERNELS)
resample_kernels = load_kernels(RESAMPLE_KERNELS)
Image.preinit()


def _check_engines(setting: str | None) -> None:
    """Pillow's verdicts for the render's setting, computed here once. Anything that goes wrong
    is left to the first task, which checks whatever it is given and reports its errors to the
    parent: a preload that raises would end the fork server with no message."""
    if not setting:
        return
    with contextlib.suppress(Exception):
        resample, reducing_gap, cell_size, quality = json.loads(setting)
        render_engines((str(resample), reducing_gap, int(cell_size), int(quality)))


_check_engines(os.environ.get(SETTING_VARIABLE))
