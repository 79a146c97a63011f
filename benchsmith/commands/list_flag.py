"""One rule for every flag that takes several values: ``--flag A B`` and ``--flag A --flag B``
mean the same (``A B``), and a given list replaces the default instead of adding to it.

argparse offers two halves: ``nargs="+"`` keeps only the last use (``--config A --config B`` is
``B``, silently), ``action="append"`` refuses ``--config A B``. Users of one benchsmith verb
learned the other's form and lost values without a word; this action takes both forms.
:func:`benchsmith.cli.build_parser` gives it to every option of every parser that takes several
values, and a test walks every parser to hold that.
"""

from __future__ import annotations

import argparse
from typing import Any


class ListFlag(argparse.Action):
    """Values of every use of the flag in one command line, in order; the default (whatever it
    is) until the flag is given."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        items = values if isinstance(values, list) else [values]
        if getattr(self, "_filled", None) is not namespace:  # first use on this command line
            self._filled = namespace
            setattr(namespace, self.dest, list(items))
        else:
            getattr(namespace, self.dest).extend(items)


def takes_several(action: argparse.Action) -> bool:
    """Whether an option (not a positional) collects several values."""
    return bool(action.option_strings) and (
        isinstance(action, argparse._AppendAction | ListFlag) or action.nargs in ("+", "*")
    )


def unify_list_flags(parser: argparse.ArgumentParser) -> None:
    """Every option of ``parser`` and its subcommands that takes several values becomes a
    :class:`ListFlag` (``nargs="+"``), keeping its dest, default, type, choices, metavar, help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                unify_list_flags(sub)
        elif takes_several(action) and not isinstance(action, ListFlag):
            action.__class__ = ListFlag
            if action.nargs in (None, "?"):  # an append flag: one value a use, now one or more
                action.nargs = "+"


LIST_FLAG_HINT = ("a flag that takes several values (--root, --config, --shots, ...) reads every "
                  "word after it: write the folder before the flag, or end the flag's list with --")  # fmt: skip


class ListFlagParser(argparse.ArgumentParser):
    """An ArgumentParser whose "required" errors say how a list flag may have taken a
    positional (``publish vlicl --root clevr=/x PLAN_DIR``): argparse's own message names only
    the missing argument. Subcommand parsers are of the same class (argparse's default)."""

    command_line: tuple[str, ...] = ()  # the words being parsed (set by build_parser)

    def error(self, message: str):  # type: ignore[override]
        given = {w.split("=", 1)[0] for w in self.command_line}
        if "arguments are required" in message and any(
            isinstance(a, ListFlag) and given & set(a.option_strings) for a in self._actions
        ):
            message = f"{message}\n  ({LIST_FLAG_HINT})"
        super().error(message)
