"""kjit from Python: launch kjit kernels on PyTorch tensors, CuPy and NumPy arrays.

    import kjit
    mod = kjit.load("examples/vector_add.mlir")
    mod.add[lambda meta: (kjit.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, n)

The launch path is native (kjit._kjit, an abi3 extension over the C++
runtime); this module adds loading, records as dicts, and the hook knobs.
docs/Python.md is the guide.
"""

import atexit as _atexit
import json as _json
import os as _os

from . import _kjit
from ._kjit import ArgumentError, CompileError, Error, dtype
from ._hooks import knobs, LaunchMetadata, HookChain
from ._autotune import autotune, Config

__all__ = [
    "load", "Module", "Kernel", "dtype", "cdiv", "knobs", "Error",
    "ArgumentError", "CompileError", "LaunchMetadata", "HookChain",
    "compiler_loaded", "autotune", "Config",
]

compiler_loaded = _kjit.compiler_loaded
# Kernels unload while the interpreter and the CUDA driver still run.
_atexit.register(_kjit._shutdown)

for _name, _canonical in [
        ("int1", "i1"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"),
        ("int64", "i64"), ("uint8", "u8"), ("uint16", "u16"),
        ("uint32", "u32"), ("uint64", "u64"), ("float16", "fp16"),
        ("bfloat16", "bf16"), ("float32", "fp32"), ("float64", "fp64"),
        ("float8e4nv", "fp8e4nv"), ("float8e5", "fp8e5")]:
    globals()[_name] = dtype(_canonical)
    __all__.append(_name)


def cdiv(a, b):
    """Ceiling division: the number of blocks of size b that cover a."""
    return (a + b - 1) // b


class Kernel(_kjit.Kernel):
    """One kernel of a kjit.Module.

    kernel[grid](*args, **kwargs) launches it: arguments by position or name,
    launch options (num_warps, num_stages, debug, ...) as keywords, on the
    current stream of the tensors' framework. grid is a tuple of 1 to 3 ints
    or a callable given a mapping of every bound argument (defaults
    included) that returns one.
    """

    @property
    def params(self):
        """The parameters as the kernel declares them: a list of dicts with
        name, type, constexpr, const, default."""
        return _json.loads(self._manifest_json)["params"]

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles the specialization these arguments select without
        launching; dtypes (kjit.float32, torch.float32, numpy's) stand in for
        tensors. Returns the specialization record as a dict, which
        preload() accepts in another process."""
        return _json.loads(self._warmup(*args, grid=grid, **kwargs))

    def preload(self, record, device=0):
        """Fills the cache from a record (a dict or its JSON) that warmup()
        or a cache hook produced."""
        if not isinstance(record, (str, bytes)):
            record = _json.dumps(record)
        elif isinstance(record, bytes):
            record = record.decode()
        self._preload(record, device)

    def __repr__(self):
        return f"<kjit.Kernel {self.name}>"


class Module(_kjit.Module):
    """A kernel IR file; its kernels are attributes (module.add) or
    module.kernel("add")."""

    def __init__(self, *args, **kwargs):
        self._kernels = {}

    def kernel(self, name):
        kernel = self._kernels.get(name)
        if kernel is None:
            try:
                kernel = Kernel(self, name)
            except Error as error:
                raise AttributeError(str(error)) from None
            self._kernels[name] = kernel
        return kernel

    @property
    def kernels(self):
        """Every kernel, by name."""
        return {name: self.kernel(name) for name in self.kernel_names()}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernel_names()))

    def __repr__(self):
        return f"<kjit.Module {self.source_name}: {', '.join(self.kernel_names())}>"


def load(path_or_text, name=None, target=None):
    """Loads a kernel IR file, or IR given as text, and analyses it.

    A string that names an existing file is read from it; a string that
    names no file and contains IR (a '{') is the IR itself, named `name` in
    diagnostics (default "<string>"). `target` ("host" or "cuda") fixes
    where every launch runs; by default the tensors decide, and a launch
    without tensors runs on the host. Errors: kjit.CompileError with the
    location for IR that does not parse or verify; FileNotFoundError."""
    if isinstance(path_or_text, _os.PathLike):
        path_or_text = _os.fspath(path_or_text)
    if isinstance(path_or_text, bytes):
        path_or_text = path_or_text.decode()
    if not isinstance(path_or_text, str):
        raise TypeError("kjit.load takes a path or the kernel IR as a str")
    if _os.path.exists(path_or_text):
        if _os.path.isdir(path_or_text):
            raise IsADirectoryError(f"kjit.load: '{path_or_text}' is a directory")
        return Module(path_or_text, False, name, target)
    if "{" in path_or_text:
        return Module(path_or_text, True, name, target)
    raise FileNotFoundError(f"kjit.load: no such file '{path_or_text}' "
                            "(and the string is not kernel IR)")
