"""One declaration per setting: a field of a frozen settings dataclass, written with
:func:`setting`, says its default, what it means, the values it allows and its CLI flag.

Everything else is read from that one field, so a setting is written once, not five times:

- the ``params.yaml`` schema of its block (:func:`settings_block`, used by the params check);
- the settings object built from the block and any CLI overrides (:func:`settings_from`), with
  every value checked against the declaration (:func:`check_settings`: a bad value names the
  key, the value and what is allowed);
- the CLI flags and their ``--help`` text (``benchsmith.commands.setting_flags``: argparse
  stays in the command layer, a family never sees an ``argparse.Namespace`` for these);
- the params reference in the docs (``scripts/make_params_reference.py``, held equal by a test).

Why dataclass metadata: HF ``datasets`` declares a packaged module's options as a
``BuilderConfig`` dataclass, and this project's curation stages already keep a settings
dataclass per stage; a field's metadata carries the rest without a second class per setting.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.schema import Block, BlockOf, ListOf, Value, declared_floats, node_of_type

META_KEY = "benchsmith_setting"


@dataclass(frozen=True)
class SettingInfo:
    """What a settings field declares besides its name, type and default."""

    help: str  # one sentence: what the setting changes (the docs and --help read it)
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    flag: bool = True  # a CLI flag ``--field-name`` overrides it
    metavar: str | None = None
    shapes_output: bool = True  # False: where or how fast the work runs, never what it makes
    aliases: tuple[str, ...] = ()  # older flag names the CLI still accepts ("--threshold")
    # where the key sits below the block, when not at its top: "sizes.{profile}" puts it in
    # one block per profile (mmneedle.sizes.sample.pool_size), read for the profile that runs
    under: str | None = None
    # defaults of other profiles than full's, for a key under "sizes.{profile}": (("sample", 12),)
    profile_defaults: tuple[tuple[str, Any], ...] = ()
    # the flag's name when ``--field-name`` would not say whose it is (``--review-model`` for
    # curate.review.model); ``off_switch``: a bool field whose flag turns it off (``--no-blind``)
    flag_name: str | None = None
    off_switch: bool = False
    # the params key when it is not the field's name: fields of one dataclass that sit in
    # different blocks may share a key (vlicl.sizes.<profile>.open_mi.episodes and
    # .open_t2i_mi.episodes are fields open_mi_episodes and open_t2i_mi_episodes)
    key: str | None = None

    def key_name(self, field_name: str) -> str:
        return self.key or field_name


def setting(
    default: Any,
    help: str,
    *,
    choices: tuple[Any, ...] = (),
    minimum: float | None = None,
    maximum: float | None = None,
    flag: bool = True,
    metavar: str | None = None,
    shapes_output: bool = True,
    aliases: tuple[str, ...] = (),
    under: str | None = None,
    profile_defaults: Mapping[str, Any] | None = None,
    flag_name: str | None = None,
    off_switch: bool = False,
    key: str | None = None,
) -> Any:
    """A settings field (use as ``name: int = setting(75, "...", minimum=1)``). A field
    ``under="sizes.{profile}"`` is a key of ``<block>.sizes.<profile>``; its ``default`` is
    the full profile's, ``profile_defaults`` another profile's (``{"sample": 12}``); ``key``
    names the params key when it is not the field's name."""
    info = SettingInfo(help, tuple(choices), minimum, maximum, flag, metavar, shapes_output,
                       tuple(aliases), under, tuple((profile_defaults or {}).items()), flag_name,
                       off_switch, key)  # fmt: skip
    return dataclasses.field(default=default, metadata={META_KEY: info})


def flag_of(name: str, info: SettingInfo) -> str:
    """The command-line flag of a declared field: its ``flag_name``, else ``--field-name``."""
    return info.flag_name or "--" + name.replace("_", "-")


def flag_value_type(hint: Any) -> tuple[Any, bool]:
    """What a field's flag reads its value as (``int``, ``float``, ``Path`` or ``str``), and
    whether it takes several values (a tuple field): ``X | None`` reads as ``X``."""
    base = hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        base = next(a for a in typing.get_args(hint) if a is not type(None))
    listed = typing.get_origin(base) is tuple
    if listed:
        base = typing.get_args(base)[0]
    return (base if base in (int, float, str, Path) else str), listed


def shown_default(field: dataclasses.Field, info: SettingInfo) -> str:
    """A declared field's default as ``--help`` shows it (``null``, a list space-separated,
    other profiles' defaults after it)."""
    default = field.default
    shown = "null" if default is None else str(default)
    if isinstance(default, tuple):
        shown = " ".join(map(str, default)) or "none"
    if info.profile_defaults:
        shown = f"{shown} ({', '.join(f'{k}: {v}' for k, v in info.profile_defaults)})"
    return shown


def declared(cls: type) -> dict[str, tuple[dataclasses.Field, SettingInfo]]:
    """The fields of ``cls`` declared with :func:`setting`, in declaration order."""
    return {
        f.name: (f, f.metadata[META_KEY]) for f in dataclasses.fields(cls) if META_KEY in f.metadata
    }


def value_node(cls: type, name: str) -> Any:
    """The schema node of one declared field: its type's node, refined by its choices and
    bounds."""
    _, info = declared(cls)[name]
    node = node_of_type(typing.get_type_hints(cls)[name])
    refine = {"choices": info.choices, "minimum": info.minimum, "maximum": info.maximum}
    if isinstance(node, Value):
        node = dataclasses.replace(node, **refine)
    elif isinstance(node, ListOf) and isinstance(node.item, Value):  # each item is held to them
        node = dataclasses.replace(node, item=dataclasses.replace(node.item, **refine))
    return node


PROFILE = "{profile}"
PROFILES = ("sample", "full")


def settings_block(cls: type) -> Block:
    """The ``params.yaml`` block of a settings dataclass: one key per declared field, those
    declared ``under`` a path in the nested blocks of that path (a ``{profile}`` part is one
    block per profile)."""
    tree: dict[str, Any] = {}  # path part -> subtree, or a key -> its value node
    for name, (_, info) in declared(cls).items():
        node = tree
        for part in info.under.split(".") if info.under else ():
            node = node.setdefault(part, {})
            assert isinstance(node, dict), f"{cls.__name__}: {part} is a key and a block"
        key = info.key_name(name)
        assert key not in node, f"{cls.__name__}: two fields declare {info.under}.{key}"
        node[key] = value_node(cls, name)
    if PROFILE in tree:  # the block itself is one block per profile (vlicl.sizes)
        tree = {profile: tree[PROFILE] for profile in PROFILES}
    top = {key: _as_block(value) for key, value in tree.items()}
    return Block(top, doc=(cls.__doc__ or "").strip())


def _as_block(node: Any) -> Any:
    """A subtree of :func:`settings_block` as schema nodes (a ``{profile}`` part is one block
    per profile)."""
    if not isinstance(node, dict):
        return node
    if PROFILE in node:
        return BlockOf(_as_block(node[PROFILE]), keys=PROFILES)
    return Block({key: _as_block(value) for key, value in node.items()})


def key_of(cls: type, name: str, profile: str = "<profile>") -> str:
    """Where field ``name`` sits below its block: ``pool_size`` or ``sizes.<profile>.pool_size``."""
    info = declared(cls)[name][1]
    key = info.key_name(name)
    return key if info.under is None else f"{info.under.replace(PROFILE, profile)}.{key}"


def _lookup(block: Mapping[str, Any] | None, path: str) -> Any:
    node: Any = block or {}
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


_MISSING = object()


def _problem(
    name: str, value: Any, node: Any, where: str, flag: bool = True
) -> BenchsmithError | None:
    key = f"{where}.{name}" if where else name  # where "": a top-level key
    given = f" (or --{name.replace('_', '-')})" if flag else ""
    fix = f"set {key} in params.yaml{given} to an allowed value"
    if isinstance(node, ListOf) and isinstance(value, list | tuple):
        items = (_problem(name, item, node.item, where, flag) for item in value)
        return next(filter(None, items), None)
    if not isinstance(node, Value) or value is None:
        return None
    if node.choices and value not in node.choices:
        return BenchsmithError(
            f"unknown {name.replace('_', ' ')} {value!r} ({key})",
            fix=f"use one of {', '.join(str(c) for c in node.choices)}",
        )
    number = isinstance(value, int | float) and not isinstance(value, bool)
    too_small = number and node.minimum is not None and value < node.minimum
    too_large = number and node.maximum is not None and value > node.maximum
    if too_small or too_large:
        return BenchsmithError(f"{key} must be {node.describe()}, got {value!r}", fix=fix)
    return None


def check_settings(instance: Any, where: str) -> None:
    """Every declared field of ``instance`` holds an allowed value, and float fields hold
    floats (``15`` in ``params.yaml`` and the default ``15.0`` are one setting, one hash).
    Call from ``__post_init__``; ``where`` is the params block (``mmneedle.render``)."""
    declared_floats(instance)
    cls = type(instance)
    for name, (_, info) in declared(cls).items():
        block = (
            where if info.under is None else f"{where}.{info.under.replace(PROFILE, '<profile>')}"
        )
        problem = _problem(info.key_name(name), getattr(instance, name), value_node(cls, name),
                           block, info.flag)  # fmt: skip
        if problem is not None:
            raise problem


def settings_from(
    cls: type,
    block: Mapping[str, Any] | None,
    overrides: Mapping[str, Any] | None = None,
    profile: str = "full",
) -> Any:
    """``cls`` from its ``params.yaml`` block (missing keys: the declared defaults; a field
    declared ``under="sizes.{profile}"`` read for ``profile``), then the overrides that are not
    None (CLI flags). Keys the block has that ``cls`` does not declare are left to the params
    check, which names them."""
    names = declared(cls)
    values = {}
    for name, (_, info) in names.items():
        found = _lookup(block, key_of(cls, name, profile))
        if found is not _MISSING:
            values[name] = found
        elif profile in dict(info.profile_defaults):
            values[name] = dict(info.profile_defaults)[profile]
    values.update({k: v for k, v in (overrides or {}).items() if v is not None and k in names})
    hints = typing.get_type_hints(cls)
    for name, value in values.items():
        if typing.get_origin(hints[name]) is tuple and isinstance(value, list):
            values[name] = tuple(value)
    return cls(**values)


def paths_as_paths(instance: Any) -> None:
    """Give every ``Path`` (or ``Path | None``) field of a frozen settings dataclass a
    ``Path``: ``params.yaml`` and a flag give strings. Call from ``__post_init__``."""
    for name, hint in typing.get_type_hints(type(instance)).items():
        value = getattr(instance, name, None)
        is_path = hint is Path or (
            typing.get_origin(hint) in (typing.Union, types.UnionType)
            and Path in typing.get_args(hint)
        )
        if is_path and isinstance(value, str):
            object.__setattr__(instance, name, Path(value))


def nulls_as_defaults(instance: Any) -> None:
    """Give every declared field that holds None its declared default: a source folder left
    ``null`` in ``params.yaml`` is the one the declaration names. Call from ``__post_init__``."""
    for name, (field, _) in declared(type(instance)).items():
        if getattr(instance, name) is None and field.default is not None:
            object.__setattr__(instance, name, field.default)


def output_identity(instance: Any) -> dict[str, Any]:
    """The declared fields that shape what is built (not the workers or the executor)."""
    return {
        name: getattr(instance, name)
        for name, (_, info) in declared(type(instance)).items()
        if info.shapes_output
    }
