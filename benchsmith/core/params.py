"""Read ``params.yaml``: the single place where build knobs live.

DVC tracks the same file, so a changed knob reruns exactly the stages that read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from benchsmith.core.errors import BenchsmithError

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


def profile_of(params: dict[str, Any]) -> str:
    profile = params.get("profile", "sample")
    if profile not in ("sample", "full"):
        raise BenchsmithError(
            f"unknown profile {profile!r}",
            path=DEFAULT_PARAMS_FILE,
            fix="set profile: sample or profile: full",
        )
    return profile


def section(params: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Nested mapping at ``keys`` (empty when absent)."""
    node: Any = params
    for key in keys:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}
