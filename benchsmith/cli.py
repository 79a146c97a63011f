"""The ``benchsmith`` command: generic verbs built from the registries.

``source`` (SOURCES), ``build`` and ``publish`` (FAMILIES), ``audit`` and ``score`` (any
published folder: its family, SCORERS), ``curate`` (STAGES), ``predict``. Errors a user can fix
(:class:`BenchsmithError`) print as a short message naming the file and the fix, with exit code
2; everything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from benchsmith import __version__
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.limits import configure as configure_limits
from benchsmith.core.params import DEFAULT_PARAMS_FILE, load_params


def _positionals(argv: Sequence[str]) -> list[str]:
    return [a for a in argv if not a.startswith("-")]


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for ``argv``: only the invoked verb (and family or source) is built in full,
    so a command imports only the code it runs (the other verbs are listed by name)."""
    from benchsmith.commands import VERBS
    from benchsmith.commands.list_flag import ListFlagParser

    parser = ListFlagParser(
        prog="benchsmith",
        description=(
            "Rebuild multimodal LLM benchmarks from their raw sources as versioned Hugging Face "
            "datasets, audit where every row came from, and score predictions. A build goes "
            "source -> build FAMILY STEP -> publish FAMILY; `dvc repro` runs the whole pipeline."
        ),
        epilog="Run `benchsmith COMMAND --help` for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"benchsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    words = _positionals(argv)
    verb = words[0] if words else None
    for name, help_text, module in VERBS:
        if verb is None or verb == name:
            module().register(subparsers, words[1:])
        else:
            subparsers.add_parser(name, help=help_text)
    from benchsmith.commands.list_flag import unify_list_flags

    unify_list_flags(parser)
    ListFlagParser.command_line = tuple(argv)
    return parser


def _check_and_configure(args: argparse.Namespace) -> None:
    """Check the params file a command reads against the schema (every key known, every value
    typed) before anything runs, then apply the image limits it sets."""
    reads_params = hasattr(args, "params")
    path = getattr(args, "params", None)
    params = load_params(path)
    if reads_params:
        from benchsmith.commands.params_check import blocks_read, check_params

        check_params(params, path or DEFAULT_PARAMS_FILE.resolve(), blocks_read(args))
    configure_limits(params)


def _naming_the_params_file(exc: BenchsmithError, args: Any) -> str:
    """The error's text, naming the params file the command read: a setting refused deep in a
    step says ``params.yaml`` (the step is given values, not the file), which is wrong when
    ``--params`` named another."""
    given = getattr(args, "params", None)
    text = str(exc)
    if given is not None and exc.path == str(DEFAULT_PARAMS_FILE):
        text = text.replace(f"  file: {DEFAULT_PARAMS_FILE}", f"  file: {given}", 1)
    return text


class _ClosedPipeSafe:
    """stdout that, once its reader is gone (``benchsmith audit ... | head -2``), swallows the
    rest of the output instead of raising ``BrokenPipeError``: the command still finishes its
    work and exits with its real status, as ``grep`` and ``git`` do when piped into ``head``."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.closed_by_reader = False

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self.closed_by_reader = True
        try:  # what is still buffered must not fail again at interpreter exit
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    original = sys.stdout
    guarded = _ClosedPipeSafe(original)
    sys.stdout = guarded  # type: ignore[assignment]
    try:
        return _run(argv)
    finally:
        guarded.flush()
        sys.stdout = original


def _run(argv: list[str]) -> int:
    from benchsmith.commands.deprecated_flags import renamed

    argv = renamed(argv)
    args = None
    try:
        args = build_parser(argv).parse_args(argv)
        _check_and_configure(args)
        result = args.handler(args)
    except BenchsmithError as exc:
        print(f"benchsmith: error: {_naming_the_params_file(exc, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "benchsmith: interrupted; completed outputs are intact, rerun to resume",
            file=sys.stderr,
        )
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
