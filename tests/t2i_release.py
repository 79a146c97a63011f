"""The miniature 2-way text-to-image release the tests ingest: the sample writer's own (each
image's colour says its task, query, class and shot; see
``benchsmith.sources.vlicl_release.sample``)."""

from benchsmith.sources.vlicl_release.sample import SHOTS_STORED, write_t2i_release
from benchsmith.sources.vlicl_release.sample import T2I_CLASSES as CLASSES
from benchsmith.sources.vlicl_release.sample import T2I_REAL as REAL
from benchsmith.sources.vlicl_release.sample import T2I_TASKS as TASKS
from benchsmith.sources.vlicl_release.sample import t2i_caption as caption
from benchsmith.sources.vlicl_release.sample import t2i_colour as colour

__all__ = ["CLASSES", "REAL", "SHOTS_STORED", "TASKS", "caption", "colour", "write_t2i_release"]
