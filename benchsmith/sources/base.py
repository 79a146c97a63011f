"""The source interface: one raw source (COCO, CLEVR, MiniImageNet, ...) and its verbs.

A source puts its raw data on disk in the *real* layout, so every builder reads the same files
whatever their origin. Its verbs, each optional where it does not apply:

- ``sample``: write a miniature copy in the exact real format (offline, seconds);
- ``fetch``: download (resumable, checked against a lock file) and extract safely;
- ``link``: use a copy the user already has (checked, then linked, never copied);
- ``check``: verify a copy's layout and counts;
- ``prepare``: what ``params.yaml`` asks for: ``sample`` in the sample profile, else ``link``
  ``sources.<name>.full.local_dir`` when set, else ``fetch`` (the DVC source stages run this).

Options of ``sample`` and ``fetch`` are declared once (:class:`Option`) and serve both the CLI
flags and the ``sources.<name>.<profile>`` block of ``params.yaml``. The registry is
:data:`benchsmith.sources.SOURCES`.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.params import profile_of, section
from benchsmith.core.schema import Block, Value

VERBS = ("sample", "fetch", "link", "check", "prepare")


@dataclass(frozen=True)
class Option:
    """One option of a verb: a CLI flag and the params key of the same name."""

    name: str  # keyword argument and params key, e.g. "n_images"
    help: str
    type: Callable[[str], Any] = str
    default: Any = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def add_to(self, parser: Any) -> None:
        """Its flag on an argparse parser (the command layer's: this module imports no argparse)."""
        if self.type is bool:
            parser.add_argument(self.flag, dest=self.name, action="store_true", help=self.help)
            return
        default = f" (default: {self.default})" if self.default not in (None, "") else ""
        parser.add_argument(
            self.flag,
            dest=self.name,
            type=self.type,
            metavar=self.name.split("_")[-1].upper(),
            help=self.help + default,
        )

    def schema(self) -> Value:
        """The ``params.yaml`` node of this option (null keeps the default)."""
        kinds = {int: "int", float: "float", str: "str", bool: "bool", Path: "path"}
        return Value(kinds.get(self.type, "any"), nullable=True)

    def value(self, given: Any, configured: Mapping[str, Any]) -> Any:
        """The CLI value, else the params value, else the default, converted to the type."""
        absent = given is None or given is False  # `is`: a given 0 is a value, not "absent"
        value = configured.get(self.name, self.default) if absent else given
        if value is None or self.type is bool:
            return bool(value) if self.type is bool else None
        try:
            return self.type(value)
        except (TypeError, ValueError) as exc:
            raise BenchsmithError(
                f"{self.name} must be {self.type.__name__}, got {value!r}",
                path="params.yaml",
                fix=f"fix {self.name} (or pass {self.flag})",
            ) from exc


def option_values(
    options: tuple[Option, ...], given: Mapping[str, Any] | None, configured: Mapping[str, Any]
) -> dict[str, Any]:
    """Each option's value: ``given`` (the flags the command line gave, by name), else
    ``configured`` (``params.yaml``), else its default."""
    return {o.name: o.value((given or {}).get(o.name), configured) for o in options}


class Source(ABC):
    """A raw source; subclasses implement the verbs that apply and declare their options."""

    name: ClassVar[str]
    title: ClassVar[str]
    layout: ClassVar[str]  # the on-disk layout, for --help
    verbs: ClassVar[tuple[str, ...]]  # the verbs it implements, a subset of VERBS
    sample_options: ClassVar[tuple[Option, ...]] = ()
    fetch_options: ClassVar[tuple[Option, ...]] = ()
    check_options: ClassVar[tuple[Option, ...]] = ()
    # why ``prepare`` in the full profile cannot download it (when ``fetch`` is not a verb)
    not_fetched: ClassVar[str] = "cannot be downloaded by benchsmith (licence-gated)"

    def absent(self, verb: str) -> BenchsmithError:
        """The error for a verb this source does not have, naming the ones it has."""
        return BenchsmithError(
            f"{self.title} has no `{verb}` step (it has: {', '.join(self.verbs)})",
            fix=f"use one of: {', '.join(f'benchsmith source {v} {self.name}' for v in self.verbs)}",
        )

    @classmethod
    def params_schema(cls) -> Block:
        """``sources.<name>``: ``sample:`` takes the sample options, ``full:`` the fetch options
        and ``local_dir`` (an existing copy to link instead)."""
        sample = {o.name: o.schema() for o in cls.sample_options}
        full = {o.name: o.schema() for o in cls.fetch_options}
        full["local_dir"] = Value("path", nullable=True)
        return Block({"sample": Block(sample), "full": Block(full)}, doc=cls.title)

    def read_root(self, out: Path) -> Path:
        """The folder the family builders read, inside the folder a verb wrote."""
        return out

    def sample(self, out: Path, *, seed: int, **options: Any) -> Path:
        raise self.absent("sample")

    def fetch(self, out: Path, **options: Any) -> Path:
        raise self.absent("fetch")

    def link(self, src: Path, out: Path) -> Path:
        raise self.absent("link")

    def check(self, root: Path, **options: Any) -> dict[str, Any]:
        raise self.absent("check")

    def prepare(self, out: Path, params: Mapping[str, Any]) -> Path:
        """Sample, link or fetch as ``params.yaml``'s profile and ``sources.<name>`` say."""
        profile = profile_of(dict(params))
        configured = section(dict(params), "sources", self.name, profile)
        options = self.sample_options if profile == "sample" else self.fetch_options
        known = {o.name for o in options} | ({"local_dir"} if profile == "full" else set())
        unknown = sorted(set(configured) - known)
        if unknown:
            raise BenchsmithError(
                f"unknown setting(s) sources.{self.name}.{profile}: {', '.join(unknown)}",
                path="params.yaml",
                fix=f"valid keys: {', '.join(sorted(known)) or '(none)'}",
            )
        if profile == "sample":
            seed = int(params.get("seed", 0))
            return self.sample(
                out, seed=seed, **option_values(self.sample_options, None, configured)
            )
        local = configured.get("local_dir")
        if local:
            return self.link(Path(local), out)
        if "fetch" not in self.verbs:
            raise BenchsmithError(
                f"{self.title} {self.not_fetched}",
                path="params.yaml",
                fix=f"set sources.{self.name}.full.local_dir to your copy",
            )
        try:
            return self.fetch(out, **option_values(self.fetch_options, None, configured))
        except BenchsmithError as exc:
            raise self.prepare_error(exc, out) from exc

    def prepare_error(self, exc: BenchsmithError, out: Path) -> BenchsmithError:
        """A fetch error as a ``dvc repro`` user meets it: the flags its fix names become the
        ``params.yaml`` keys that set them (the stage's command takes no flags), and the way
        round any download is named: a copy you have, by ``local_dir`` or ``source link``."""
        fix = exc.fix or "rerun"
        for option in self.fetch_options:
            fix = fix.replace(option.flag, f"sources.{self.name}.full.{option.name} in params.yaml")
        local = (f"or use a copy you already have: set sources.{self.name}.full.local_dir in "
                 f"params.yaml (or run `benchsmith source link {self.name} --out {out} DIR`)")  # fmt: skip
        message = str(exc).split("\n  file: ")[0].split("\n  fix: ")[0]
        return type(exc)(message, path=exc.path, fix=f"{fix}; {local}")
