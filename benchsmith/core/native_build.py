"""Build a numba kernel module's entry points into one native object file, once.

Why: loading numba costs a process about 0.4 s (its import, its CPU target, then the cached
kernels) before the first kernel runs; a CLI render pays it in its fork server every time, and
the render's own work is about 1.5 s. The object code of a kernel does not need numba to run,
only to be written: this module, run once per kernel source, toolchain and CPU
(:mod:`benchsmith.core.native_kernels` decides when), compiles each entry point as a C
function and links them into one object that llvmlite alone loads in milliseconds.

How: each entry point named by the module's ``NATIVE_ENTRY_POINTS`` is an ``@njit`` function
with explicit signatures. Its C wrapper takes every array as a pointer followed by its shape
(``carray`` rebuilds the array inside, without a copy) and every scalar as it is. Everything
but the wrappers is made internal, dead code (numba's Python-facing wrappers, its error
paths) is dropped, and what the object still needs from outside must be an LLVM intrinsic or
a C library routine: a kernel that allocates (numba's runtime) or raises (the Python API) is
refused here, with the symbols named, rather than failing to link later in a worker.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# what the object may still call outside itself: LLVM intrinsics, and the C library routines
# they lower to (resolved in the loading process, which links libc and libm)
_ALLOWED_EXTERNALS = re.compile(r"llvm\..*|mem(cpy|move|set)|(sqrt|exp|log|pow|fabs|floor|ceil)f?")
_DECLARATION = re.compile(r'^declare [^@]*@"?([^"(\s]+)"?\(', re.M)


class NativeBuildError(RuntimeError):
    """A kernel module's entry points cannot be built as standalone native code."""


def build_native_object(module_name: str) -> tuple[list[dict[str, Any]], bytes]:
    """The entry points of ``module_name`` (their C symbols and arguments) and one object
    file holding them. Imports numba and the kernel module; compiles in this process."""
    import llvmlite.binding as ll
    import numba

    module = importlib.import_module(module_name)
    names = getattr(module, "NATIVE_ENTRY_POINTS", None)
    if not names:
        raise NativeBuildError(f"{module_name} names no NATIVE_ENTRY_POINTS")
    entries, irs = [], []
    for name in names:
        entry, c_function = _c_entry(module_name, name, getattr(module, name), numba)
        entries.append(entry)
        irs.append((entry["symbol"], c_function.inspect_llvm()))
    machine = _target_machine(ll)
    linked = _link_entry_points(irs, ll, machine)
    _check_externals(module_name, str(linked))
    return entries, machine.emit_object(linked)


def _c_entry(module_name: str, name: str, kernel: Any, numba: Any) -> tuple[dict[str, Any], Any]:
    """The C wrapper of one ``@njit`` kernel and its manifest entry."""
    signatures = list(getattr(kernel, "nopython_signatures", []))
    if not signatures:
        raise NativeBuildError(f"{module_name}.{name} is not an @njit kernel with a signature")
    first = signatures[0]
    arguments: list[dict[str, Any]] = []
    c_types, params, call = [], [], []
    for k, arg_type in enumerate(first.args):
        if isinstance(arg_type, numba.types.Array):
            if arg_type.layout != "C":
                raise NativeBuildError(f"{module_name}.{name}: argument {k} is not C-contiguous")
            same = [s.args[k] for s in signatures]
            if any((t.dtype, t.ndim) != (arg_type.dtype, arg_type.ndim) for t in same):
                raise NativeBuildError(f"{module_name}.{name}: argument {k} changes type")
            writable = all(t.mutable for t in same)  # a read-only overload accepts both
            arguments.append({"kind": "array", "dtype": str(arg_type.dtype),
                              "ndim": arg_type.ndim, "writable": writable})  # fmt: skip
            dims = [f"a{k}_{d}" for d in range(arg_type.ndim)]
            c_types += [numba.types.CPointer(arg_type.dtype)] + [numba.types.int64] * len(dims)
            params += [f"a{k}", *dims]
            call.append(f"carray(a{k}, ({', '.join(dims)},))")
        elif isinstance(arg_type, (numba.types.Integer, numba.types.Float)):
            arguments.append({"kind": "scalar", "dtype": str(arg_type)})
            c_types.append(arg_type)
            params.append(f"a{k}")
            call.append(f"a{k}")
        else:
            raise NativeBuildError(f"{module_name}.{name}: argument {k} is a {arg_type}")
    returns = first.return_type
    if returns == numba.types.none:
        body, result = f"    kernel({', '.join(call)})\n", "void"
    elif isinstance(returns, (numba.types.Integer, numba.types.Float)):
        body, result = f"    return kernel({', '.join(call)})\n", str(returns)
    else:
        raise NativeBuildError(f"{module_name}.{name} returns a {returns}")
    namespace = {"kernel": kernel, "carray": numba.carray}
    exec(f"def c_{name}({', '.join(params)}):\n{body}", namespace)  # noqa: S102 - our own text
    c_function = numba.cfunc(first.return_type(*c_types), nopython=True)(namespace[f"c_{name}"])
    entry = {"name": name, "symbol": c_function.native_name, "arguments": arguments,
             "returns": result}  # fmt: skip
    return entry, c_function


def _link_entry_points(irs: list[tuple[str, str]], ll: Any, machine: Any) -> Any:
    """One optimised LLVM module exporting only the C wrappers."""
    linked = None
    for symbol, ir in irs:
        module = ll.parse_assembly(ir)
        for function in module.functions:
            if not function.is_declaration and function.name != symbol:
                function.linkage = "internal"
        for variable in module.global_variables:
            if not variable.is_declaration:
                variable.linkage = "internal"
        if linked is None:
            linked = module
        else:
            linked.link_in(module)
    assert linked is not None
    builder = ll.create_pass_builder(machine, ll.create_pipeline_tuning_options(speed_level=3))
    passes = builder.getModulePassManager()
    passes.add_global_dead_code_eliminate_pass()
    passes.add_strip_dead_prototype_pass()
    passes.run(linked, builder)
    linked.verify()
    return linked


def _check_externals(module_name: str, ir: str) -> None:
    outside = sorted(
        {name for name in _DECLARATION.findall(ir) if not _ALLOWED_EXTERNALS.fullmatch(name)}
    )
    if outside:
        raise NativeBuildError(
            f"{module_name}: its entry points still call {', '.join(outside)} (numba's runtime "
            "or the Python API: the kernel allocates an array or can raise). Pass scratch "
            "arrays in and keep the kernels free of exceptions."
        )


def _target_machine(ll: Any) -> Any:
    """This CPU's target machine, as numba's JIT configures it (host CPU and features)."""
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    target = ll.Target.from_default_triple()
    return target.create_target_machine(
        cpu=ll.get_host_cpu_name(),
        features=ll.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )
