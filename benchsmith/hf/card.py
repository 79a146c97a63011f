"""Dataset cards: YAML metadata the Hub reads, plus a Markdown body rendered from a template.

Templates live in the project's ``cards/`` folder, which the wheel installs as the package
``benchsmith.cards`` (see ``setup.py``), so a card renders the same from a source checkout, an
editable install and a plain ``pip install`` of the wheel. They are found through
``importlib.resources``, never through a path relative to this file.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import jinja2
import yaml
from huggingface_hub import DatasetCardData
from huggingface_hub.repocard import REGEX_YAML_BLOCK

from benchsmith.core.errors import BenchsmithError

CARDS_PACKAGE = "benchsmith.cards"


def card_template_source(name: str) -> str:
    """The text of one shipped card template (an error names it when it is not installed)."""
    try:
        return resources.files(CARDS_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, IsADirectoryError) as exc:
        raise BenchsmithError(
            f"dataset card template {name!r} is not installed with benchsmith",
            path=f"cards/{name}",
            fix="reinstall benchsmith (the wheel ships the cards/ templates)",
        ) from exc


def render_text(template: str, context: dict[str, Any]) -> str:
    """Render a template string (card sections that live with their stage or family)."""
    return _compiled(template).render(**context)


@functools.lru_cache(maxsize=128)
def _compiled(template: str) -> jinja2.Template:
    """A template compiled once per process: a publish renders a dozen sections, and parsing
    and compiling one costs more than rendering it (a curation's card: 0.1 s)."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template)


SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                   (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"),
                   (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))  # fmt: skip


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` examples."""
    for limit, name in SIZE_CATEGORIES:
        if n < limit:
            return name
    return "n>1B"


def render_card(template_name: str, metadata: dict[str, Any], context: dict[str, Any]) -> str:
    """Front matter + body, checked as the Hub's card class reads it (:func:`check_card`)."""
    body = render_text(card_template_source(template_name), context)
    front = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000)
    text = f"---\n{front}---\n\n{body}"
    check_card(text)
    return text


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


def check_card(text: str) -> None:
    """Raise what ``huggingface_hub.DatasetCard(text)`` raises on malformed metadata, by its
    steps: the front matter block it finds, parsed as a mapping, given to ``DatasetCardData``.

    Why not ``DatasetCard(text)`` itself: it parses with PyYAML's pure-Python loader, and a
    card's ``dataset_info`` (every config's features, 40 KB) takes 0.3 s that way and 0.03 s
    with libyaml; every publish and every audit of a folder renders its cards."""
    match = REGEX_YAML_BLOCK.search(text)
    if match is None:
        raise ValueError("the card has no YAML front matter block")
    data = yaml.load(match.group(2), Loader=_YAML_LOADER) or {}  # noqa: S506 (a safe loader)
    if not isinstance(data, dict):
        raise ValueError("repo card metadata block should be a dict")
    DatasetCardData(**data, ignore_metadata_errors=False)
