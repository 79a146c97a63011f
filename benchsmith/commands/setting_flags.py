"""CLI flags read from settings declarations (:mod:`benchsmith.core.settings`).

A declared field ``jpeg_quality`` of the step's settings becomes ``--jpeg-quality``, typed by
the field, limited to its choices, with its help sentence and where its default comes from.
The step then gets the settings object (``params.yaml``'s block, overridden by the flags given),
so neither the flag nor its default is written a second time in a family's code.
"""

from __future__ import annotations

import argparse
import types
import typing
from typing import Any

from benchsmith.core.params import load_params, section
from benchsmith.core.settings import declared, settings_from
from benchsmith.family.base import StepSettings


def _flag_type(hint: Any) -> tuple[Any, str | None]:
    """The argparse ``type`` and ``nargs`` of a field: a tuple field takes one or more values."""
    base, nargs = hint, None
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # X | None: X
        base = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(base) is tuple:
        base, nargs = typing.get_args(base)[0], "+"
    return (base if base in (int, float, str) else str), nargs


def add_setting_flags(parser: argparse.ArgumentParser, settings: StepSettings) -> None:
    """One ``--flag`` per declared field of ``settings.type`` that asks for one."""
    hints = typing.get_type_hints(settings.type)
    where = ".".join(settings.block)
    group = parser.add_argument_group(f"settings ({where} in params.yaml)")
    for name, (field, info) in declared(settings.type).items():
        if not info.flag:
            continue
        default = "null" if field.default is None else field.default
        if isinstance(default, tuple):
            default = " ".join(map(str, default)) or "none"
        kind, nargs = _flag_type(hints[name])
        group.add_argument(
            "--" + name.replace("_", "-"),
            *info.aliases,
            dest=name,
            type=kind,
            nargs=nargs,
            choices=info.choices or None,
            # a value from a few choices shows them; several values, each one's metavar
            metavar=None if info.choices and not nargs else (info.metavar or name.upper()),
            help=f"{info.help} (default: {where}.{name}, else {default})",
        )


def settings_of(args: argparse.Namespace, settings: StepSettings) -> Any:
    """The step's settings: its ``params.yaml`` block (``--params``), then the flags given."""
    params = load_params(getattr(args, "params", None))
    block = section(params, *settings.block)
    overrides = {name: getattr(args, name, None) for name in declared(settings.type)}
    return settings_from(settings.type, block, overrides)
