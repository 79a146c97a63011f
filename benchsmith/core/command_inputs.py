"""What a command reads besides its settings: its input and output paths, ``--json``,
``--params``, ``--metrics``, ``--root``, declared once as fields of a frozen dataclass.

Settings (:mod:`benchsmith.core.settings`) live in ``params.yaml`` and shape what is built;
inputs say which files a run reads and writes, so they are flags only. Both are declared the
same way, a field with its help sentence in its metadata, and the command layer
(``benchsmith.commands.setting_flags``) makes the argparse flags from the declaration and hands
the step a filled-in inputs object: a family never sees an ``argparse.Namespace``, and argparse
is imported by ``cli.py`` and ``commands/`` alone.

How a field becomes a flag:

- ``plan_dir: Path = argument("...", positional=True)``: a positional argument (no default:
  declare it before the fields that have one); ``optional=True`` makes it ``nargs="?"`` with
  its default;
- ``out: Path = argument("...", required=True)``: a required ``--out``;
- ``grids: tuple[int, ...] | None = argument("...")``: ``--grids N [N ...]``;
- ``json: bool = json_switch("...")``: ``--json``, a switch;
- ``root: tuple[str, ...] = root_overrides(NAMES)``: ``--root NAME=DIR``, repeatable;
- ``plan_dir: Path = earlier_step_folder("plan", DEFAULT_PLAN)``: the folder an earlier step
  wrote, an optional positional defaulting to where ``dvc repro`` writes it.

One shape for every family's steps (``tests/commands/test_flag_vocabulary.py`` holds it): a step
reads the earlier step's folder as a positional (``PLAN_DIR``) that defaults to the pipeline's
path, writes ``--out`` that defaults to the pipeline's path too, and finds its sources through
``FAMILY.sources`` in ``params.yaml`` (a flag names another folder for one run). Only an output
the pipeline never writes (a rehydrated copy, a hard list) has a required ``--out``.

The flag is ``--field-name`` unless ``flag=`` names another (``samples_per_config`` is
``--samples``). Like HF ``datasets``' ``BuilderConfig`` fields, the dataclass is the contract.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

META_KEY = "benchsmith_input"
PARAMS_HELP = "params file (default: ./params.yaml if present)"


@dataclass(frozen=True)
class InputInfo:
    """What an inputs field declares besides its name, type and default."""

    help: str
    metavar: str | None = None
    positional: bool = False
    optional: bool = False  # a positional that may be left out (its default)
    required: bool = False
    choices: tuple[Any, ...] = ()
    repeat: bool = False  # the flag may be given several times (``--root A=X --root B=Y``)
    flag: str | None = None  # the flag when it is not --field-name
    old_flag: str | None = None  # a positional's former flag, still read for one release


_NO_DEFAULT = object()


def argument(
    help: str,
    *,
    default: Any = _NO_DEFAULT,
    metavar: str | None = None,
    positional: bool = False,
    optional: bool = False,
    required: bool = False,
    choices: tuple[Any, ...] = (),
    repeat: bool = False,
    flag: str | None = None,
    old_flag: str | None = None,
) -> Any:
    """An inputs field. A positional (unless ``optional``) or required one has no default
    (argparse insists on it); any other defaults to ``default``, else None. ``old_flag``: the
    flag a positional was before the vocabulary was made one (hidden, warned about)."""
    info = InputInfo(help, metavar, positional, optional, required, tuple(choices), repeat, flag,
                     old_flag)  # fmt: skip
    needs_value = (positional and not optional) or required
    if default is _NO_DEFAULT and not needs_value:
        default = () if repeat else None
    if default is _NO_DEFAULT:
        return dataclasses.field(metadata={META_KEY: info})
    return dataclasses.field(default=default, metadata={META_KEY: info})


def declared_inputs(cls: type) -> dict[str, tuple[dataclasses.Field, InputInfo]]:
    """The fields of ``cls`` declared with :func:`argument`, in declaration order."""
    return {
        f.name: (f, f.metadata[META_KEY]) for f in dataclasses.fields(cls) if META_KEY in f.metadata
    }


def json_switch(what: str) -> Any:
    """``--json``: also print a step's summary as JSON on stdout (logs stay on stderr), so
    ``dvc repro`` output stays short and a script can still read the numbers."""
    return argument(
        f"also print the {what} as JSON on stdout (the output files have it either way)",
        default=False,
    )


def output_folder(what: str, default: Path) -> Any:
    """``--out DIR``, a folder the step replaces atomically, with its default."""
    return argument(f"{what} (replaced atomically; default {default})", default=default,
                    metavar="DIR")  # fmt: skip


def earlier_step_folder(
    what: str, default: Path, metavar: str = "PLAN_DIR", old_flag: str | None = None
) -> Any:
    """``PLAN_DIR``: the folder an earlier step wrote, an optional positional whose default
    is where ``dvc repro`` writes it, so a step runs the same by hand and in the pipeline."""
    return argument(f"folder of {what} (default {default})", positional=True, optional=True,
                    default=default, metavar=metavar, old_flag=old_flag)  # fmt: skip


def params_file(help: str = PARAMS_HELP) -> Any:
    """``--params FILE``: every step reads its defaults from it."""
    return argument(help, metavar="FILE")


def metrics_file(what: str) -> Any:
    """``--metrics FILE``: the DVC metrics file of a stage (:mod:`benchsmith.core.metrics`)."""
    return argument(
        f"also write the {what} counts as a DVC metrics file (JSON of numbers)", metavar="FILE"
    )


def root_overrides(names: tuple[str, ...], moved_since: str = "the build") -> Any:
    """``--root NAME=DIR`` (repeatable): a source folder that moved since ``moved_since``;
    :func:`benchsmith.hf.roots.parse_root_flags` checks the names."""
    return argument(
        f"a source folder that moved since {moved_since}; NAME is one of {', '.join(names)}",
        metavar="NAME=DIR",
        repeat=True,
    )
