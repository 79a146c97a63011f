"""Score model predictions against a published benchsmith dataset.

One scorer per family (``<family>.py``, with its answer-extraction policy in
``<family>_parse.py`` / ``<family>_normalise.py``), registered in ``SCORERS`` under the family's
name; shared metrics (``metrics.py``), LIME aggregation (``lime.py``), the predictions reader
(``predictions.py``) and the scorer interface with its helpers (``base.py``). The package stays
light on purpose (pyarrow, polars, json, math, re; no ``datasets``/PIL) so that scoring a run is
fast and can happen on a machine that never built the dataset.
"""

from benchsmith.core.registry import Entry, Registry

SCORERS = Registry(
    "scorer",
    Entry("mmneedle", "benchsmith.scoring.mmneedle", "MMNEEDLE_SCORER"),
    Entry("vlicl", "benchsmith.scoring.vlicl", "VLICL_SCORER"),
    Entry("mmiu", "benchsmith.scoring.mmiu", "MMIU_SCORER"),
    Entry("multi", "benchsmith.scoring.multi", "MULTI_SCORER"),
)
