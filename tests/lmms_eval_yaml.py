"""Read an lmms-eval task YAML the way lmms-eval's ``load_yaml_config(mode="full")`` does.

lmms-eval itself needs torch and transformers, which CI does not install, so the tests read
exported tasks with this loader, which follows its rules: ``!function module.name`` imports
``module.py`` from the YAML's folder (falling back to an importable module), ``include`` merges
the included files first, and relative ``data_files`` of the local builders (``parquet``, ...)
resolve against the YAML's folder when the file exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import yaml

LOCAL_BUILDERS = {"csv", "json", "parquet", "text", "pandas", "arrow"}


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it


def _function_loader(yaml_dir: Path) -> type[yaml.SafeLoader]:
    class Loader(_SAFE_LOADER):
        pass

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        *module_parts, name = loader.construct_scalar(node).split(".")
        module_name = ".".join(module_parts)
        path = yaml_dir / f"{module_name}.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location(f"{yaml_dir.name}_{module_name}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
        return getattr(module, name)

    Loader.add_constructor("!function", construct)
    return Loader


def _resolve_files(value: Any, yaml_dir: Path) -> Any:
    if isinstance(value, str):
        candidate = yaml_dir / value
        return str(candidate) if not os.path.isabs(value) and candidate.is_file() else value
    if isinstance(value, dict):
        return {k: _resolve_files(v, yaml_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_files(v, yaml_dir) for v in value]
    return value


def load_task_yaml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_function_loader(path.parent))
    includes = config.pop("include", [])
    merged: dict[str, Any] = {}
    for include in reversed([includes] if isinstance(includes, str) else includes):
        merged.update(load_task_yaml(path.parent / include))
    merged.update(config)
    kwargs = merged.get("dataset_kwargs")
    local = merged.get("dataset_path") in LOCAL_BUILDERS
    if local and isinstance(kwargs, dict) and "data_files" in kwargs:
        kwargs["data_files"] = _resolve_files(kwargs["data_files"], path.parent)
    return merged
