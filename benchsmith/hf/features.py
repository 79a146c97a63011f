"""Hugging Face features shared by every published config: the ``provenance`` struct.

The values are built by :func:`benchsmith.core.records.provenance`; this is their schema, kept
apart from ``core`` so that building records never imports ``datasets``.
"""

from __future__ import annotations

import datasets

_STRING = datasets.Value("string")

PROVENANCE_FEATURE = {
    "family": _STRING,
    "builder_version": _STRING,
    "code_revision": _STRING,
    "params_hash": _STRING,
    "seed": datasets.Value("int64"),
    "sources": datasets.List(
        {k: _STRING for k in ("dataset", "split", "id", "file", "sha256", "license", "url")}
    ),
    "decisions": datasets.List({k: _STRING for k in ("stage", "action", "reason", "evidence")}),
}
