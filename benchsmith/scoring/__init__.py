"""Score model predictions against a published benchsmith dataset.

One module pair per family: ``<family>_parse`` turns a free-text response into a structured
answer under one documented extraction policy, and ``<family>`` reads the published parquet,
joins the predictions JSONL and computes the metrics. The package stays light on purpose
(polars, json, math, re only, no ``datasets``/PIL) so that scoring a run is fast and can happen
on a machine that never built the dataset.
"""
