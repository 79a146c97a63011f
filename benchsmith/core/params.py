"""Read ``params.yaml``: the single place where build knobs live.

DVC tracks the same file, so a changed knob reruns exactly the stages that read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.settings import (
    check_settings,
    setting,
    settings_from,
)

DEFAULT_PARAMS_FILE = Path("params.yaml")
# libyaml's loader where PyYAML's wheel has it (every CLI call reads params.yaml: 0.1 s in pure
# Python, a few ms in C); the same safe constructors either way
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_params(path: str | Path | None = None) -> dict[str, Any]:
    """Load the params file; an absent default file yields ``{}`` so the CLI works anywhere."""
    explicit = path is not None
    path = Path(path) if path is not None else DEFAULT_PARAMS_FILE
    if not path.exists():
        if explicit:
            raise BenchsmithError(
                "params file not found", path=path, fix="pass --params with an existing params.yaml"
            )
        return {}
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
    except yaml.YAMLError as exc:
        raise BenchsmithError(
            f"params file is not valid YAML: {exc}", path=path, fix="fix the YAML syntax"
        ) from exc
    if not isinstance(data, dict):
        raise BenchsmithError("params file must hold a mapping at the top level", path=path)
    return data


@dataclass(frozen=True)
class BuildSettings:
    """The build's own keys, at the top of ``params.yaml``: which sources, which version, which
    seed. Declared once: the params check, every reader (:func:`build_settings`) and the params
    reference are read from here."""

    profile: str = setting(
        "sample", "`sample`: generated miniature sources; `full`: the real ones",
        choices=("sample", "full"), flag=False,
    )  # fmt: skip
    version: str = setting(
        "0.1.0", "semantic version of the published datasets (card, `build_info.json`)",
        flag=False,
    )  # fmt: skip
    seed: int = setting(0, "seed of every draw (a family's own `seed:` overrides it)",
                        minimum=0, flag=False)  # fmt: skip

    def __post_init__(self) -> None:
        for name in ("profile", "version", "seed"):
            if getattr(self, name) is None:
                raise BenchsmithError(f"{name} must be set, got None", fix=f"remove {name}: "
                                      "from params.yaml for its default, or give a value")  # fmt: skip
        object.__setattr__(self, "version", str(self.version))  # `version: 1.0` reads as a float
        check_settings(self, "")


def build_settings(params: dict[str, Any]) -> BuildSettings:
    """The top-level keys of ``params`` (absent: the declared defaults), checked."""
    try:
        return settings_from(BuildSettings, params)
    except BenchsmithError as exc:
        what = str(exc).split("\n")[0]
        raise BenchsmithError(what, path=DEFAULT_PARAMS_FILE, fix=exc.fix) from exc


def profile_of(params: dict[str, Any]) -> str:
    return build_settings(params).profile


def section(params: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Nested mapping at ``keys`` (empty when absent)."""
    node: Any = params
    for key in keys:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}
