"""Write the rows of ``docs/params.md`` that belong to declared settings, from the declarations.

A step's settings declared with :func:`benchsmith.core.settings.setting` (a ``Step`` of a
family with ``settings=StepSettings(...)``) get their table in ``docs/params.md`` from the
declaration alone: key, default, meaning and allowed values. Each table sits between
``<!-- settings: BLOCK -->`` and ``<!-- end settings -->``; ``tests/test_docs.py`` fails when
the committed page differs, so run ``python scripts/make_params_reference.py`` after changing a
declaration.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path, PurePath

PAGE = Path(__file__).resolve().parents[1] / "docs" / "params.md"
SOURCES_BLOCK = "sources"  # the marker of every source's options (declared as ``Option``)
TOP = "top"  # the marker of the top-level keys (profile, version, seed)
BLOCK = re.compile(
    r"(<!-- settings: (?P<block>[\w.\[\]]+) -->\n)(.*?)(<!-- end settings -->)", re.S
)


def declared_blocks() -> dict[str, type]:
    """Every settings block a family (or curation) declares: ``{"mmneedle.render": RenderConfig}``."""
    from benchsmith.builders import FAMILIES
    from benchsmith.commands.params_check import TOP_LEVEL_BLOCKS
    from benchsmith.curate.config import DECLARED_BLOCKS as CURATE_BLOCKS

    blocks = {
        ".".join(block): kind
        for family in FAMILIES
        for block, kind in family.declared_settings().items()
    }
    top = {".".join(block) or TOP: kind for block, kind in TOP_LEVEL_BLOCKS.items()}
    return {**top, **blocks, **{".".join(block): kind for block, kind in CURATE_BLOCKS.items()}}


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # as params.yaml writes it
        return str(value).lower()
    if isinstance(value, tuple | list):  # as params.yaml writes a list
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    return f"`{value}`" if isinstance(value, str | PurePath) else str(value)


def table(block: str, cls: type) -> str:
    from benchsmith.core.settings import declared, flag_of, key_of, value_node

    rows = ["| key | default | meaning |", "|---|---|---|"]
    prefix = "" if block == TOP else f"{block}."
    for name, (field, info) in declared(cls).items():
        allowed = value_node(cls, name).describe()
        names = [f"`{flag_of(name, info)}`", *(f"`{a}`" for a in info.aliases)]
        flag = f"; flag {' or '.join(names)}" if info.flag else ""
        if info.flag and info.off_switch:
            flag = f"; flag {' or '.join(names)} turns it off"
        others = "".join(f" ({profile}: {_shown(v)})" for profile, v in info.profile_defaults)
        rows.append(
            f"| `{prefix}{key_of(cls, name)}` | {_shown(field.default)}{others} | {info.help} "
            f"({allowed}{flag}) |"
        )
    return "\n".join(rows) + "\n"


def sources_table() -> str:
    """``sources.<name>.<profile>.<option>`` for every source, from its declared options (the
    same ones its ``benchsmith source`` flags and params check read)."""
    from benchsmith.sources import SOURCES

    rows = ["| key | default | meaning |", "|---|---|---|"]
    for name in SOURCES.names():
        source = SOURCES.get(name)
        for profile, options in (("sample", source.sample_options), ("full", source.fetch_options)):
            if profile == "full":
                needed = "" if "fetch" in source.verbs else f"; required: it {source.not_fetched}"
                rows.append(f"| `sources.{name}.full.local_dir` | null | your copy, linked instead "
                            f"of downloaded; its layout: {source.layout} (a path or null"
                            f"{needed}) |")  # fmt: skip
            for option in options:
                kind = option.schema().describe()
                rows.append(f"| `sources.{name}.{profile}.{option.name}` | {_shown(option.default)} "
                            f"| {option.help} ({kind}) |")  # fmt: skip
    return "\n".join(rows) + "\n"


def rendered(page: str) -> str:
    """``page`` with every settings table written from its declaration; a marker naming a
    block no step declares is an error (a renamed block must not leave a stale table)."""
    blocks = declared_blocks()

    def fill(match: re.Match) -> str:
        name = match.group("block")
        if name == SOURCES_BLOCK:
            return match.group(1) + sources_table() + match.group(4)
        if name not in blocks:
            raise SystemExit(f"docs/params.md: no step declares settings block {name!r}")
        return match.group(1) + table(name, blocks[name]) + match.group(4)

    return BLOCK.sub(fill, page)


def main() -> int:
    page = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(rendered(page), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
