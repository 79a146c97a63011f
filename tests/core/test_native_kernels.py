"""Kernels built once as native code and loaded without numba: same results as numba's, never
stale, never loaded from a file that does not verify, arguments checked as numba checks them.

Each test writes its own kernel module (a package on ``sys.path`` in a subprocess) and its own
cache folder (``BENCHSMITH_NATIVE_CACHE``), so nothing here touches the project's caches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KERNEL = """
import numba as nb
import numpy as np

NATIVE_ENTRY_POINTS = ("scaled_sum", "add_rows")

_VALUES = nb.types.Array(nb.int64, 1, "C", readonly=True)


@nb.njit(nb.int64(_VALUES, nb.int64, nb.types.Array(nb.float64, 1, "C")), cache=False)
def scaled_sum(values, factor, out):
    total = 0
    for k in range(values.size):
        out[k] = values[k] * FACTOR * factor
        total += values[k]
    return total


@nb.njit(
    [nb.void(nb.types.Array(nb.uint8, 2, "C", readonly=readonly), nb.types.Array(nb.int32, 1, "C"))
     for readonly in (False, True)],
    cache=False,
)
def add_rows(rows, acc):
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            acc[j] += rows[i, j]
"""

ALLOCATING = """
import numba as nb
import numpy as np

NATIVE_ENTRY_POINTS = ("doubled_sum",)


@nb.njit(nb.int64(nb.types.Array(nb.int64, 1, "C")), cache=False)
def doubled_sum(values):
    twice = np.empty(values.size, np.int64)  # numba's runtime: not standalone code
    for k in range(values.size):
        twice[k] = 2 * values[k]
    return twice.sum()
"""

# run in a fresh process: builds or loads the kernels, calls both, reports what it saw
CALLER = """
import json, sys
import numpy as np
from benchsmith.core.native_kernels import load_kernels, cache_path

kernels = load_kernels("kernelpkg.kernels")
values = np.arange(1, 6, dtype=np.int64)
values.flags.writeable = False
out = np.zeros(5)
total = kernels.scaled_sum(values, 3, out)
rows = np.arange(12, dtype=np.uint8).reshape(3, 4)
acc = np.zeros(4, np.int32)
kernels.add_rows(rows, acc)
print(json.dumps({
    "native": getattr(kernels, "native", False),
    "numba": "numba" in sys.modules,
    "total": int(total),
    "out": out.tolist(),
    "acc": acc.tolist(),
    "cache": str(cache_path("kernelpkg.kernels")[0]),
}))
"""


def write_kernels(root: Path, source: str, factor: int = 2) -> None:
    package = root / "kernelpkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(f"FACTOR = {factor}\n" + source)


def run_caller(root: Path, cache: Path, **env: str) -> dict:
    environment = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                   "BENCHSMITH_NATIVE_CACHE": str(cache), **env}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", CALLER], capture_output=True, text=True,
                          env=environment, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def expected(factor: int) -> dict:
    return {"total": 15, "out": [float(v * factor * 3) for v in range(1, 6)],
            "acc": [12, 15, 18, 21]}  # fmt: skip


def test_built_once_then_loaded_without_numba_with_numbas_results(tmp_path):
    write_kernels(tmp_path / "src", KERNEL)
    cache = tmp_path / "cache"
    first = run_caller(tmp_path / "src", cache)
    assert first["native"] and first["numba"]  # the first process builds: numba compiles
    assert {k: first[k] for k in ("total", "out", "acc")} == expected(2)
    assert Path(first["cache"]).is_file() and Path(first["cache"]).parent == cache
    second = run_caller(tmp_path / "src", cache)
    assert second["native"] and not second["numba"]  # loaded: numba never imported
    assert {k: second[k] for k in ("total", "out", "acc")} == expected(2)
    by_numba = run_caller(tmp_path / "src", cache, BENCHSMITH_NATIVE_KERNELS="0")
    assert not by_numba["native"] and by_numba["numba"]
    assert {k: by_numba[k] for k in ("total", "out", "acc")} == expected(2)


def test_a_changed_kernel_is_never_served_from_the_old_build(tmp_path):
    cache = tmp_path / "cache"
    write_kernels(tmp_path / "src", KERNEL, factor=2)
    old = run_caller(tmp_path / "src", cache)
    write_kernels(tmp_path / "src", KERNEL, factor=7)
    new = run_caller(tmp_path / "src", cache)
    assert new["out"] == expected(7)["out"] and new["cache"] != old["cache"]
    assert Path(old["cache"]).is_file()  # the old build stays for the old source


def test_a_cache_file_that_does_not_verify_is_built_again(tmp_path):
    """A damaged object handed to LLVM would crash the process: it is checked first. Each
    damage (cut short, a flipped byte in the code, a broken manifest) is built again."""
    cache = tmp_path / "cache"
    write_kernels(tmp_path / "src", KERNEL)
    path = Path(run_caller(tmp_path / "src", cache)["cache"])
    whole = path.read_bytes()
    manifest_at = whole.index(b"{")
    for damaged in (
        whole[:-100],
        whole[:-50] + bytes([whole[-50] ^ 0xFF]) + whole[-49:],
        whole[:manifest_at] + b"x" + whole[manifest_at + 1 :],
    ):
        path.write_bytes(damaged)
        again = run_caller(tmp_path / "src", cache)
        assert again["numba"]  # rebuilt
        assert {k: again[k] for k in ("total", "out", "acc")} == expected(2)
        assert path.read_bytes() != damaged  # and the file is whole again
    assert run_caller(tmp_path / "src", cache)["numba"] is False


def test_two_processes_building_at_once_both_get_working_kernels(tmp_path):
    write_kernels(tmp_path / "src", KERNEL)
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "src"),
                   "BENCHSMITH_NATIVE_CACHE": str(tmp_path / "cache")}  # fmt: skip
    runs = [subprocess.Popen([sys.executable, "-c", CALLER], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=environment)
            for _ in range(2)]  # fmt: skip
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        assert json.loads(out.strip().splitlines()[-1])["out"] == expected(2)["out"]
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [
        Path(json.loads(out.strip().splitlines()[-1])["cache"]).name
    ]  # no temporary file left behind


def test_a_kernel_that_allocates_is_refused_at_build_and_runs_on_numba(tmp_path):
    """The build names what the kernel still calls (numba's runtime); a render then runs that
    module on numba with a warning rather than failing (or loading code that cannot link)."""
    write_kernels(tmp_path / "src", ALLOCATING)
    program = textwrap.dedent("""
        import warnings
        import numpy as np
        from benchsmith.core.native_build import NativeBuildError, build_native_object
        from benchsmith.core.native_kernels import load_kernels
        try:
            build_native_object("kernelpkg.kernels")
        except NativeBuildError as error:
            print("refused:", error)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernels = load_kernels("kernelpkg.kernels")
        print(getattr(kernels, "native", False), kernels.doubled_sum(np.arange(4)))
        print("warned:", caught[0].message)
    """)
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "src"),
                   "BENCHSMITH_NATIVE_CACHE": str(tmp_path / "cache")}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=environment, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    refused, result, warned = done.stdout.strip().splitlines()[-3:]
    assert refused.startswith("refused:") and "NRT_" in refused and "scratch arrays" in refused
    assert result == "False 12"
    assert warned.startswith("warned:") and "running kernelpkg.kernels on numba" in warned
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_arguments_are_checked_as_numbas_dispatcher_checks_them(tmp_path, monkeypatch):
    import numpy as np

    from benchsmith.core import native_kernels

    write_kernels(tmp_path / "src", KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv("BENCHSMITH_NATIVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(native_kernels, "_loaded", {})
    kernels = native_kernels.load_kernels("kernelpkg.kernels")
    assert kernels.native
    values, out = np.arange(5, dtype=np.int64), np.zeros(5)
    Error = native_kernels.NativeKernelError
    with pytest.raises(Error, match=r"scaled_sum: argument 0 must be a C-contiguous 1-D int64"):
        kernels.scaled_sum(values.astype(np.int32), 1, out)
    with pytest.raises(Error, match="argument 0 .* got strided"):
        kernels.scaled_sum(np.arange(10, dtype=np.int64)[::2], 1, out)
    with pytest.raises(Error, match="argument 2 must be a C-contiguous 1-D writable float64"):
        out.flags.writeable = False
        kernels.scaled_sum(values, 1, out)
    with pytest.raises(Error, match="argument 0 .* got list"):
        kernels.add_rows([[1, 2]], np.zeros(2, np.int32))
    with pytest.raises(Error, match="takes 2 arguments, got 1"):
        kernels.add_rows(np.zeros((1, 2), np.uint8))
    rows = np.ones((2, 3), np.uint8)
    rows.flags.writeable = False  # a read-only overload exists: accepted
    acc = np.zeros(3, np.int32)
    kernels.add_rows(rows, acc)
    assert acc.tolist() == [2, 2, 2]
