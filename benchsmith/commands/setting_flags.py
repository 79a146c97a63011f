"""CLI flags read from declarations: settings (:mod:`benchsmith.core.settings`) and command
inputs (:mod:`benchsmith.core.command_inputs`).

A declared field ``jpeg_quality`` of the step's settings becomes ``--jpeg-quality``, typed by
the field, limited to its choices, with its help sentence and where its default comes from.
The step then gets the settings object (``params.yaml``'s block, overridden by the flags given),
so neither the flag nor its default is written a second time in a family's code.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from typing import Any

from benchsmith.core.command_inputs import declared_inputs
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.params import load_params, profile_of, section
from benchsmith.core.settings import (
    declared,
    flag_of,
    flag_value_type,
    key_of,
    settings_from,
    shown_default,
)
from benchsmith.family.base import StepSettings


def add_setting_flags(parser: argparse.ArgumentParser, settings: StepSettings) -> None:
    """One ``--flag`` per declared field of ``settings.type`` that asks for one."""
    hints = typing.get_type_hints(settings.type)
    where = ".".join(settings.block)
    group = parser.add_argument_group(f"settings ({where} in params.yaml)")
    for name, (field, info) in declared(settings.type).items():
        if not info.flag or (settings.only is not None and name not in settings.only):
            continue
        default = shown_default(field, info)
        help_text = f"{info.help} (default: {where}.{key_of(settings.type, name)}, else {default})"
        if info.off_switch:  # the flag turns the setting off; not given: the block decides
            group.add_argument(flag_of(name, info), *info.aliases, dest=name, action="store_const",
                               const=False, default=None, help=help_text)  # fmt: skip
            continue
        kind, listed = flag_value_type(hints[name])
        nargs = "+" if listed else None
        group.add_argument(
            flag_of(name, info),
            *info.aliases,
            dest=name,
            type=kind,
            nargs=nargs,
            choices=info.choices or None,
            # a value from a few choices shows them; several values, each one's metavar
            metavar=None if info.choices and not nargs else (info.metavar or name.upper()),
            help=help_text,
        )


def settings_of(args: argparse.Namespace, settings: StepSettings) -> Any:
    """The step's settings: its ``params.yaml`` block (``--params``), then the flags given."""
    params = load_params(getattr(args, "params", None))
    block = section(params, *settings.block)
    overrides = {name: getattr(args, name, None) for name in declared(settings.type)}
    return settings_from(settings.type, block, overrides, profile_of(params))


def add_input_flags(parser: argparse.ArgumentParser, inputs: type) -> None:
    """The arguments of a step's inputs dataclass, in declaration order."""
    hints = typing.get_type_hints(inputs)
    for name, (field, info) in declared_inputs(inputs).items():
        kind, listed = flag_value_type(hints[name])
        nargs = "+" if listed else None
        options: dict[str, Any] = {"help": info.help}
        if info.choices:
            options["choices"] = info.choices
        if info.metavar:
            options["metavar"] = info.metavar
        if hints[name] is bool:
            parser.add_argument(info.flag or "--" + name.replace("_", "-"), dest=name,
                                action="store_true", **options)  # fmt: skip
            continue
        if info.repeat:
            options.update(action="append", default=[])
        else:
            if nargs:
                options["nargs"] = nargs
            if field.default is not dataclasses.MISSING:
                options["default"] = field.default
        if info.positional:
            if info.optional:
                options.update(nargs="?", default=field.default)
            parser.add_argument(name, type=kind, **options)
            if info.old_flag:
                parser.add_argument(info.old_flag, dest=_old_dest(name), type=kind,
                                    help=argparse.SUPPRESS)  # fmt: skip
            continue
        if info.required:
            options["required"] = True
        parser.add_argument(info.flag or "--" + name.replace("_", "-"), dest=name, type=kind,
                            **options)  # fmt: skip


def _old_dest(name: str) -> str:
    return f"{name}__old_flag"


def inputs_of(args: argparse.Namespace, inputs: type) -> Any:
    """The step's inputs object from the parsed flags (lists become tuples: it is frozen).
    A positional's former flag (``--plan DIR`` for ``PLAN_DIR``) fills it, with a warning."""
    values = {}
    for name, (field, info) in declared_inputs(inputs).items():
        value = getattr(args, name)
        old = getattr(args, _old_dest(name), None) if info.old_flag else None
        if old is not None:
            if value != field.default:
                raise BenchsmithError(f"{info.metavar or name} was given twice: {value} and "
                                      f"{info.old_flag} {old}",
                                      fix=f"give it once, as the argument ({info.old_flag} "
                                      "is the old spelling)")  # fmt: skip
            print(f"benchsmith: warning: {info.old_flag} is deprecated; give "
                  f"{info.metavar or name} as the argument (the old flag goes in 0.3)",
                  file=sys.stderr)  # fmt: skip
            value = old
        values[name] = tuple(value) if isinstance(value, list) else value
    return inputs(**values)
