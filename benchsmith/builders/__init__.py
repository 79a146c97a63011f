"""Benchmark families, one folder each; ``FAMILIES`` is the registry the shared layers use.

A family is reached only through this registry: the CLI mounts its build steps and publish
flags, the publisher writes its publication, the audit asks it to re-derive rows. Adding a
family is one folder in ``builders/`` and one line here. Entries load on first use, so running
one family never imports another's code.
"""

from benchsmith.core.registry import Entry, Registry

FAMILIES = Registry(
    "benchmark family",
    Entry("mmneedle", "benchsmith.builders.mmneedle.family", "MMNEEDLE"),
    Entry("vlicl", "benchsmith.builders.vlicl.family", "VLICL"),
    Entry("mmiu", "benchsmith.builders.mmiu.family", "MMIU"),
    Entry("multi", "benchsmith.builders.multi.family", "MULTI"),
)
