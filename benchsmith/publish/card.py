"""Dataset cards: YAML metadata the Hub reads, plus a Markdown body rendered from ``cards/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import yaml
from huggingface_hub import DatasetCard

from benchsmith.core.errors import BenchsmithError

CARDS_DIR = Path(__file__).resolve().parents[2] / "cards"


def render_card(
    template_name: str,
    metadata: dict[str, Any],
    context: dict[str, Any],
    cards_dir: Path = CARDS_DIR,
) -> str:
    """Front matter + body; parsed back with ``huggingface_hub.DatasetCard`` to prove it is valid."""
    try:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(cards_dir),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        body = env.get_template(template_name).render(**context)
    except jinja2.TemplateNotFound as exc:
        raise BenchsmithError(
            "dataset card template not found", path=cards_dir / template_name
        ) from exc
    front = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000)
    text = f"---\n{front}---\n\n{body}"
    DatasetCard(text)  # raises on malformed metadata
    return text
