"""A small schema language for ``params.yaml``: every key known, every value typed.

A typo must not silently fall back to a default (``grid:`` for ``grids:`` built all four
grids; ``profle: full`` built the sample), and a wrong type must not surface as a
``ValueError`` deep in a builder. Each owner of a ``params.yaml`` block declares its part with
the nodes below (families, sources and curation stages; :mod:`benchsmith.params_schema` puts
them together) and :func:`check_document` reports *every* problem at once, each with its dotted
key, the expected type, the value found and, for an unknown key, the closest valid name.

Nodes are plain frozen dataclasses, so a schema is data that tests and docs can walk.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from benchsmith.core.errors import BenchsmithError

_KIND_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "path": "a path (string)",
    "any": "any value",
}


@dataclass(frozen=True)
class Value:
    """One scalar: its kind, optional allowed choices and bounds, and whether null is allowed."""

    kind: str  # int | float | str | bool | path | any
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False

    def describe(self) -> str:
        text = _KIND_WORDS[self.kind]
        if self.choices:
            text = "one of " + ", ".join(str(c) for c in self.choices)
        elif self.minimum is not None and self.maximum is not None:
            text += f" from {self.minimum:g} to {self.maximum:g}"
        elif self.minimum is not None:
            text += f" >= {self.minimum:g}"
        return text + (" or null" if self.nullable else "")


_PLURALS = (
    ("an integer", "integers"),
    ("a number", "numbers"),
    ("a string", "strings"),
    ("a path", "paths"),
    ("one of", "values from"),
    ("a mapping", "mappings"),
)


@dataclass(frozen=True)
class ListOf:
    """A list of ``item``; ``scalar_ok`` also accepts one bare item (read as a one-item list)."""

    item: Node
    nullable: bool = False
    scalar_ok: bool = False
    non_empty: bool = False

    def describe(self) -> str:
        item = self.item.describe()
        for singular, plural in _PLURALS:
            if item.startswith(singular):
                item = plural + item[len(singular) :]
                break
        text = f"a list of {item}"
        return text + (" or null" if self.nullable else "")


@dataclass(frozen=True)
class Block:
    """A mapping with known keys; ``null`` or an absent block means "all defaults"."""

    fields: Mapping[str, Node] = field(default_factory=dict)
    doc: str = ""

    def describe(self) -> str:
        return "a mapping"


@dataclass(frozen=True)
class BlockOf:
    """A mapping whose keys are free (or drawn from ``keys``) and whose values share a node."""

    value: Node
    keys: tuple[str, ...] = ()

    def describe(self) -> str:
        return "a mapping"


Node = Union[Value, ListOf, Block, BlockOf]  # noqa: UP007 - used at runtime by isinstance


def _type_name(value: Any) -> str:
    return {
        bool: "bool",
        int: "int",
        float: "float",
        str: "str",
        list: "list",
        dict: "mapping",
    }.get(type(value), type(value).__name__)


def _matches_kind(kind: str, value: Any) -> bool:
    if kind == "any":
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False  # YAML `yes` is not a number or a string
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, int | float)
    return isinstance(value, str)  # str, path


def _check_value(node: Value, value: Any, key: str, problems: list[str]) -> None:
    if value is None:
        if not node.nullable and node.kind != "any":
            problems.append(f"{key}: expected {node.describe()}, got null")
        return
    if not _matches_kind(node.kind, value):
        problems.append(f"{key}: expected {node.describe()}, got {value!r} ({_type_name(value)})")
        return
    if node.choices and value not in node.choices:
        hint = _closest(str(value), [str(c) for c in node.choices])
        problems.append(f"{key}: expected {node.describe()}, got {value!r}{hint}")
    elif _out_of_bounds(node, value):
        problems.append(f"{key}: expected {node.describe()}, got {value!r}")


def _out_of_bounds(node: Value, value: Any) -> bool:
    too_small = node.minimum is not None and value < node.minimum
    return too_small or (node.maximum is not None and value > node.maximum)


def _closest(name: str, valid: list[str]) -> str:
    match = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def check_node(node: Node, value: Any, key: str, problems: list[str]) -> None:
    """Append a line per problem of ``value`` (at dotted ``key``) against ``node``."""
    if isinstance(node, Value):
        _check_value(node, value, key, problems)
    elif isinstance(node, ListOf):
        if value is None:
            if not node.nullable:
                problems.append(f"{key}: expected {node.describe()}, got null")
            return
        if not isinstance(value, list):
            if node.scalar_ok and not isinstance(value, dict):
                bad_item: list[str] = []
                check_node(node.item, value, key, bad_item)
                if not bad_item:
                    return  # one bare item: a one-item list
            problems.append(
                f"{key}: expected {node.describe()}, got {value!r} ({_type_name(value)})"
            )
            return
        if node.non_empty and not value:
            problems.append(f"{key}: expected {node.describe()}, got an empty list")
        for index, item in enumerate(value):
            check_node(node.item, item, f"{key}[{index}]", problems)
    elif value is None:
        return  # an empty block (`curate:` with nothing under it) keeps every default
    elif not isinstance(value, dict):
        problems.append(f"{key}: expected a mapping, got {value!r} ({_type_name(value)})")
    elif isinstance(node, BlockOf):
        for name, item in value.items():
            if node.keys and name not in node.keys:
                problems.append(
                    f"{_join(key, name)}: unknown key{_closest(str(name), list(node.keys))}; "
                    f"valid: {', '.join(node.keys)}"
                )
                continue
            check_node(node.value, item, _join(key, name), problems)
    else:
        for name, item in value.items():
            if name not in node.fields:
                problems.append(
                    f"{_join(key, name)}: unknown key{_closest(str(name), list(node.fields))}"
                    f"; valid: {', '.join(node.fields)}"
                )
                continue
            check_node(node.fields[name], item, _join(key, name), problems)


def _join(prefix: str, name: Any) -> str:
    return f"{prefix}.{name}" if prefix else str(name)


def check_document(schema: Block, document: Mapping[str, Any], path: str | Path) -> None:
    """Raise one :class:`BenchsmithError` listing every problem of ``document`` (or return)."""
    problems: list[str] = []
    check_node(schema, dict(document), "", problems)
    if problems:
        listing = "\n".join(f"    {line}" for line in problems)
        raise BenchsmithError(
            f"{len(problems)} problem(s) in the params file:\n{listing}",
            path=path,
            fix="correct the key names and values above (docs/params.md lists every key)",
        )


# -- schemas derived from settings dataclasses ------------------------------------------------


def node_of_type(hint: Any) -> Node:
    """The node for a dataclass field's type hint (``int``, ``float | None``, ``tuple[str, ...]``,
    ``Path``): settings dataclasses are the single declaration of their keys and types."""
    nullable = False
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(hint))
        hint = args[0] if len(args) == 1 else Any
        origin = typing.get_origin(hint)
    if origin in (tuple, list):
        return ListOf(node_of_type(typing.get_args(hint)[0]), nullable=True, scalar_ok=True)
    kind = {int: "int", float: "float", str: "str", bool: "bool", Path: "path"}.get(hint, "any")
    return Value(kind, nullable=nullable)


def declared_floats(instance: Any) -> None:
    """Give every ``float`` (or ``float | None``) field of a (frozen) settings dataclass a float: ``15`` written in
    ``params.yaml`` and the code's default ``15.0`` are one setting, and must hash and record
    as one (``15`` and ``15.0`` are different JSON)."""
    hints = typing.get_type_hints(type(instance))
    for name, hint in hints.items():
        value = getattr(instance, name, None)
        optional_float = typing.get_origin(hint) in (Union, types.UnionType) and set(
            typing.get_args(hint)
        ) == {float, type(None)}
        is_float = hint is float or optional_float
        if is_float and isinstance(value, int) and not isinstance(value, bool):
            object.__setattr__(instance, name, float(value))


def block_of_dataclass(cls: type, **overrides: Node) -> Block:
    """A :class:`Block` with one key per field of the settings dataclass ``cls``; ``overrides``
    refine a field (choices, bounds) where the type alone says too little."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: node_of_type(hints[f.name]) for f in dataclasses.fields(cls)}
    fields.update(overrides)
    return Block(fields, doc=(cls.__doc__ or "").strip())
