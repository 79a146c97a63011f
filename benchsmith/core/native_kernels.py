"""numba kernels run as native code that loads without numba: 25 ms instead of 0.4 s.

Why: a CLI render's work takes about 1.5 s, and before its workers could start, their fork
server spent 0.4 s importing numba, readying its CPU target and loading the cached kernels.
:mod:`benchsmith.core.native_build` compiles a kernel module's entry points once into an
object file; :func:`load_kernels` loads that file with llvmlite alone (numba's own code
generator, already installed with numba) and returns callables taking the same arguments as
the ``@njit`` functions.

The cache is keyed so that a changed kernel is never served stale: the key hashes the kernel
module's source, the build recipe's, numba's and llvmlite's versions, Python's, and this
CPU's name and features. A file that does not verify (truncated, another key, a checksum
mismatch) is built again; one is written atomically, beside numba's own cache
(``__pycache__`` next to the module) or, where that is read-only, in
``~/.cache/benchsmith/native`` (``BENCHSMITH_NATIVE_CACHE`` overrides both). With
``BENCHSMITH_NATIVE_KERNELS=0``, or where llvmlite cannot load the object, the kernel module
itself (numba) is used: the same code, compiled by numba's JIT.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import importlib.util
import json
import os
import struct
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 1
_MAGIC = b"benchsmith native kernels\n"
_CTYPES = {
    "int64": ctypes.c_int64, "int32": ctypes.c_int32, "uint64": ctypes.c_uint64,
    "uint32": ctypes.c_uint32, "uint8": ctypes.c_uint8, "float64": ctypes.c_double,
    "float32": ctypes.c_float, "void": None,
}  # fmt: skip

_loaded: dict[str, Any] = {}
_engine: Any = None


class NativeKernelError(RuntimeError):
    """A native kernel was called with arguments its C entry point cannot take."""


def load_kernels(module_name: str) -> Any:
    """``module_name``'s ``NATIVE_ENTRY_POINTS`` as native callables (an object with one
    attribute per entry point), built on first use; the module itself where native code is
    off or cannot load. Once per process."""
    if module_name not in _loaded:
        _loaded[module_name] = _native_or_numba(module_name)
    return _loaded[module_name]


def _native_or_numba(module_name: str) -> Any:
    if os.environ.get("BENCHSMITH_NATIVE_KERNELS", "1") == "0":
        return importlib.import_module(module_name)
    try:
        import llvmlite.binding  # noqa: F401 - numba's code generator: present with numba
    except ImportError:
        return importlib.import_module(module_name)
    path, key = cache_path(module_name)
    cached = _read_cache(path, key)
    if cached is None:
        from benchsmith.core.native_build import NativeBuildError, build_native_object

        try:
            cached = build_native_object(module_name)
        except NativeBuildError as error:  # this numba's code cannot stand alone: run on numba
            warnings.warn(f"{error}; running {module_name} on numba", stacklevel=3)
            return importlib.import_module(module_name)
        _write_cache(path, key, *cached)
    return KernelSet(module_name, *cached)


def cache_key(module_name: str) -> str:
    """What the object code of ``module_name``'s kernels depends on, hashed."""
    import llvmlite
    import llvmlite.binding as ll

    digest = hashlib.sha256()
    for part in (
        f"format {FORMAT}",
        _source(module_name),
        _source("benchsmith.core.native_build"),
        _numba_version(),
        f"llvmlite {llvmlite.__version__}",
        f"python {sys.version_info[:2]} {sys.platform}",
        f"cpu {ll.get_process_triple()} {ll.get_host_cpu_name()}",
        ll.get_host_cpu_features().flatten(),
    ):
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


def _numba_version() -> bytes:
    """numba's version file, read without importing numba (a second of start-up) or
    importlib.metadata (8 ms); its version from the package metadata if it has none."""
    spec = importlib.util.find_spec("numba")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        with contextlib.suppress(OSError):
            return (Path(folder) / "_version.py").read_bytes()
    from importlib.metadata import version

    return f"numba {version('numba')}".encode()


def _source(module_name: str) -> bytes:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise ImportError(f"no module named {module_name!r}")
    return Path(spec.origin).read_bytes()


def cache_path(module_name: str) -> tuple[Path, str]:
    """Where ``module_name``'s object file is cached, and its key."""
    key = cache_key(module_name)
    stem = module_name.rsplit(".", 1)[-1]
    name = f"{stem}.{key[:20]}.native"
    if os.environ.get("BENCHSMITH_NATIVE_CACHE"):
        return Path(os.environ["BENCHSMITH_NATIVE_CACHE"]) / name, key
    spec = importlib.util.find_spec(module_name)
    beside = Path(spec.origin).parent / "__pycache__"  # type: ignore[union-attr, arg-type]
    if os.access(beside if beside.exists() else beside.parent, os.W_OK):
        return beside / name, key
    return Path.home() / ".cache" / "benchsmith" / "native" / name, key


def _read_cache(path: Path, key: str) -> tuple[list[dict[str, Any]], bytes] | None:
    """The cached entries and object code; None if missing or not verified."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC)
    if data[:head] != _MAGIC or len(data) < head + 4:
        return None
    (size,) = struct.unpack("<I", data[head : head + 4])
    try:
        manifest = json.loads(data[head + 4 : head + 4 + size])
    except ValueError:
        return None
    code = data[head + 4 + size :]
    if manifest.get("key") != key or manifest.get("sha256") != hashlib.sha256(code).hexdigest():
        return None
    return manifest["entries"], code


def _write_cache(path: Path, key: str, entries: list[dict[str, Any]], code: bytes) -> None:
    """Atomically; a folder that cannot be written only costs the next process a build."""
    manifest = json.dumps(
        {"key": key, "sha256": hashlib.sha256(code).hexdigest(), "entries": entries}
    ).encode()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            os.fchmod(handle, 0o644)  # mkstemp's 0600 would keep other users rebuilding it
            with os.fdopen(handle, "wb") as out:
                out.write(_MAGIC + struct.pack("<I", len(manifest)) + manifest + code)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def _load_object(code: bytes) -> Any:
    """Load object code into this process's MCJIT engine (one per process)."""
    global _engine
    import llvmlite.binding as ll

    if _engine is None:
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        machine = ll.Target.from_default_triple().create_target_machine(codemodel="jitdefault")
        _engine = ll.create_mcjit_compiler(ll.parse_assembly(""), machine)
    _engine.add_object_file(ll.ObjectFileRef.from_data(code))
    _engine.finalize_object()
    return _engine


@dataclass(frozen=True)
class _Argument:
    kind: str  # "array" or "scalar"
    dtype: np.dtype
    ndim: int = 0
    writable: bool = False


class NativeKernel:
    """One entry point: checks its arguments as numba's dispatcher would (dtype, dimensions,
    C order, writability: a wrong one would be read as raw memory) and calls the C function."""

    def __init__(self, module_name: str, entry: dict[str, Any], address: int):
        self.__name__ = entry["name"]
        self.qualified = f"{module_name}.{entry['name']}"
        self._arguments = [
            _Argument(a["kind"], np.dtype(a["dtype"]), a.get("ndim", 0), a.get("writable", False))
            for a in entry["arguments"]
        ]
        c_types: list[Any] = []
        for argument in self._arguments:
            if argument.kind == "array":
                c_types += [ctypes.c_void_p] + [ctypes.c_int64] * argument.ndim
            else:
                c_types.append(_CTYPES[argument.dtype.name])
        self._function = ctypes.CFUNCTYPE(_CTYPES[entry["returns"]], *c_types)(address)
        self._integer = [a.kind == "scalar" and a.dtype.kind in "iu" for a in self._arguments]

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self._arguments):
            raise NativeKernelError(
                f"{self.qualified} takes {len(self._arguments)} arguments, got {len(args)}"
            )
        c_args: list[Any] = []
        for k, (value, argument) in enumerate(zip(args, self._arguments, strict=True)):
            if argument.kind == "array":
                self._check_array(k, value, argument)
                c_args.append(value.ctypes.data)
                c_args.extend(value.shape)
            else:
                c_args.append(int(value) if self._integer[k] else float(value))
        return self._function(*c_args)

    def _check_array(self, k: int, value: Any, argument: _Argument) -> None:
        if (
            not isinstance(value, np.ndarray)
            or value.dtype != argument.dtype
            or value.ndim != argument.ndim
            or not value.flags.c_contiguous
            or (argument.writable and not value.flags.writeable)
        ):
            got = (
                f"{'' if value.flags.writeable else 'read-only '}"
                f"{'C-contiguous' if value.flags.c_contiguous else 'strided'} "
                f"{value.ndim}-D {value.dtype}"
                if isinstance(value, np.ndarray)
                else type(value).__name__
            )
            raise NativeKernelError(
                f"{self.qualified}: argument {k} must be a C-contiguous {argument.ndim}-D "
                f"{'writable ' if argument.writable else ''}{argument.dtype} array, got {got}"
            )


class KernelSet:
    """A kernel module's entry points, loaded as native code (``native`` is True)."""

    native = True

    def __init__(self, module_name: str, entries: list[dict[str, Any]], code: bytes):
        self.module_name = module_name
        engine = _load_object(code)
        for entry in entries:
            address = engine.get_function_address(entry["symbol"])
            if not address:
                raise ImportError(f"{module_name}: {entry['symbol']} is not in its object code")
            setattr(self, entry["name"], NativeKernel(module_name, entry, address))
