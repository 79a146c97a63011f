"""The ``multi:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.multi.config import APPLY_TO, ELITE_MODES, H_FORMS, OcrSettings
from benchsmith.core.schema import Block, ListOf, Value
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:

    return {
        "seed": Value("int", minimum=0, nullable=True),
        "ocr": settings_block(OcrSettings),  # declared once, on the dataclass
        "cleaning": Block(
            {
                "apply_to": Value("str", choices=APPLY_TO),
                "remove_hints": Value("bool"),
                "split_parallel_blanks": Value("bool"),
            }
        ),
        "near_duplicates": Block(
            {
                "enabled": Value("bool"),
                "ngram": Value("int", minimum=1, maximum=8),
                "num_perm": Value("int", minimum=8, maximum=1024),
                "bands": Value("int", minimum=1, maximum=512),
                "min_jaccard": Value("float", minimum=0, maximum=1),
                "image_bits": Value("int", minimum=0, maximum=32),
                "min_stem_chars": Value("int", minimum=1),
            }
        ),
        "selection": Block(
            {
                "apply_to": Value("str", choices=APPLY_TO),
                "p": Value("float", minimum=0, maximum=1),
                "m": Value("int", minimum=0),
                "h_form": Value("str", choices=H_FORMS),
                "weights": ListOf(Value("float", minimum=0), non_empty=True),
                "a": Value("float", minimum=0),
                "b": Value("float", minimum=0),
            }
        ),
        "elite": Block(
            {
                "mode": Value("str", choices=ELITE_MODES),
                "hard_list": Value("path", nullable=True),
            }
        ),
        "sources": Block(
            {
                "exams": Value("path", nullable=True),
                "release": Value("path", nullable=True),
            }
        ),
    }
