"""The miniature CoBSAT release the tests ingest: the sample writer's own (the pixels say what
an image shows; see ``benchsmith.sources.vlicl_release.sample``)."""

from benchsmith.sources.vlicl_release.sample import SCENARIOS, write_cobsat_release
from benchsmith.sources.vlicl_release.sample import seen_cobsat as seen

__all__ = ["SCENARIOS", "seen", "write_cobsat_release"]
