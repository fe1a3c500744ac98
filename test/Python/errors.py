# Every refusal of the Python package is a Python exception with kjit's
# message: the binder's, the argument reader's, the grid's, the loader's
# (a located CompileError), and the record reader's. None of them leaves the
# kernel unusable.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples %t.dir

import os
import sys

import numpy as np

import kjit

examples, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
mod = kjit.load(os.path.join(examples, "vector_add.mlir"))
add = mod.add
x = np.zeros(16, np.float32)
ints = np.zeros(16, np.int32)
checked = 0


def refuses(call, kind, *fragments):
    global checked
    try:
        call()
    except kind as error:
        for fragment in fragments:
            assert fragment in str(error), (fragment, str(error))
        checked += 1
        return error
    raise AssertionError(f"no {kind.__name__} for {fragments}")


one = (1,)
# The binder's refusals: ArgumentError is a TypeError and a kjit.Error.
assert issubclass(kjit.ArgumentError, TypeError)
assert issubclass(kjit.ArgumentError, kjit.Error)
refuses(lambda: add[one](x, x, x), kjit.ArgumentError,
        "kernel 'add': missing argument 'n'")
refuses(lambda: add[one](x, x, x, 16, 1024, 5), TypeError,
        "kernel 'add' takes 5 arguments but 6 were given")
refuses(lambda: add[one](x, x, x, 16, BLOCKK=3), TypeError,
        "keyword argument 'BLOCKK' was specified but unrecognised")
refuses(lambda: add[one](ints, x, x, 16), kjit.ArgumentError,
        "argument 'x' of kernel 'add': expected a tensor of fp32", "got a tensor of i32")
refuses(lambda: add[one](x, x, x, 2**40), kjit.ArgumentError,
        "integer 1099511627776 does not fit parameter type i32")
refuses(lambda: add[one](x, x, x, 2**200), kjit.ArgumentError,
        "does not fit in 128 bits")
refuses(lambda: add[one](x, x, x, 16, num_warps=3), kjit.ArgumentError,
        "launch option 'num_warps' must be a power of two, got 3")
refuses(lambda: add[one](x, x, x, 16, stream=3), kjit.ArgumentError,
        "the 'stream' keyword is no longer accepted")
refuses(lambda: add[one](x, x, x, lambda: 0), kjit.ArgumentError,
        "argument 'n' of kernel 'add'", "got a callable")

# The argument reader's.
refuses(lambda: add[one](x, x, x, "16"), kjit.ArgumentError,
        "argument 'n' (at 3): an object of type 'str' is not a launch value")
refuses(lambda: add[one](x, object(), x, 16), kjit.ArgumentError,
        "argument 'y' (at 1): an object of type 'object'")
refuses(lambda: add[one](x, np.zeros(4, np.complex64), x, 16), kjit.ArgumentError,
        "argument 'y' (at 1): a tensor of buffer format 'Zf'")
refuses(lambda: add[one](x, np.zeros(4, ">f4"), x, 16), kjit.ArgumentError,
        "buffer format '>f'")
# A strided view has no contiguous buffer: it is read through
# __array_interface__, whose typestr names an unsupported dtype as well.
refuses(lambda: add[one](x, np.zeros(8, np.complex64)[::2], x, 16), kjit.ArgumentError,
        "argument 'y' (at 1): a tensor of typestr '<c8'")
refuses(lambda: add.launch(one, x, x, x, 16, stream="s"), kjit.ArgumentError,
        "stream= must be a stream handle")


class CudaArray:
    """A device array as CuPy presents one (never dereferenced here)."""

    class Device:
        def __init__(self, id):
            self.id = id

    def __init__(self, device):
        self.device = CudaArray.Device(device)

    @property
    def __cuda_array_interface__(self):
        return {"data": (0x10000, False), "typestr": "<f4", "shape": (16,),
                "version": 3}


refuses(lambda: add[one](x, CudaArray(0), x, 16), kjit.ArgumentError,
        "argument 'y' (at 1) is on cuda:0, but the launch's first tensor is on host:0")
refuses(lambda: add[one](CudaArray(0), CudaArray(1), x, 16), kjit.ArgumentError,
        "argument 'y' (at 1) is on cuda:1", "on cuda:0")
on_cuda = kjit.load(os.path.join(examples, "vector_add.mlir"), target="cuda")
refuses(lambda: on_cuda.add[one](x, x, x, 16), kjit.ArgumentError,
        "Pointer argument x (at 0) cannot be accessed from cuda (cpu tensor?)")

# The grid's.
refuses(lambda: add[(1, 2, 3, 4)], TypeError, "a grid has 1 to 3 dimensions, got 4")
refuses(lambda: add["a"], TypeError, "a grid is a tuple of 1 to 3 ints")
refuses(lambda: add[5], TypeError, "got an int (write (n,))")
refuses(lambda: add[(-1,)], ValueError, "grid dimension 0 must be an int from 0 to 2^32-1")
refuses(lambda: add[lambda meta: "no"](x, x, x, 16), TypeError, "a grid is a tuple")


def failing_grid(meta):
    raise LookupError("grid callable failed")


refuses(lambda: add[failing_grid](x, x, x, 16), LookupError, "grid callable failed")
refuses(lambda: add.launch(), TypeError, "needs a grid")
refuses(lambda: add.bind(), TypeError, "needs a grid")
bound = add.bind(one, x, x, x, 16)
refuses(lambda: bound(x, x, x, 16, 1), TypeError, "bound with 4 positional arguments; got 5")
refuses(lambda: bound(x, n=3), TypeError, "new positional arguments only")
refuses(lambda: bound(CudaArray(0)), kjit.ArgumentError, "bound on host:0")
refuses(lambda: add.bind(one, x, x, x), kjit.ArgumentError, "missing argument 'n'")

# The loader's: a located CompileError for IR that does not parse.
error = refuses(lambda: kjit.load("kjit.kernel @k() {\n  kjit.bogus\n}\n", name="bad.mlir"),
                kjit.CompileError, "bad.mlir:2:3: error: custom op 'kjit.bogus' is unknown")
assert (error.file, error.line, error.column) == ("bad.mlir", 2, 3)
bad = os.path.join(scratch, "undeclared.mlir")
with open(bad, "w") as f:
    f.write("kjit.kernel @k(%a: i32) {\n  %x = arith.addi %a, %b : i32\n}\n")
error = refuses(lambda: kjit.load(bad), kjit.CompileError, "use of undeclared SSA value")
assert (error.file, error.line, error.column) == (bad, 2, 23), vars(error)
refuses(lambda: kjit.load(os.path.join(scratch, "missing.mlir")), FileNotFoundError,
        "no such file")
refuses(lambda: kjit.load(scratch), IsADirectoryError, "is a directory")
refuses(lambda: kjit.load(5), TypeError, "takes a path or the kernel IR")
refuses(lambda: kjit.load(os.path.join(examples, "vector_add.mlir"), target="tpu"),
        ValueError, "unknown target 'tpu'")
refuses(lambda: mod.nope, AttributeError, "no kernel named 'nope'", "kernels: add")
refuses(lambda: mod.get_global("NOPE"), kjit.Error, "NOPE")
refuses(lambda: kjit.dtype("fp7"), ValueError, "unknown dtype 'fp7'")

# The record reader's.
refuses(lambda: add.preload('{"bad": 1}'), kjit.ArgumentError, "specialization record")
refuses(lambda: add.preload({"version": 1}), kjit.ArgumentError,
        "specialization record: missing member 'name'")
refuses(lambda: add.preload("not json"), kjit.Error, "specialization record")

# After all of that the kernel launches as before.
y = np.arange(16, dtype=np.float32)
out = np.zeros(16, np.float32)
add[one](y, y, out, 16)
np.testing.assert_array_equal(out, 2 * y)
print(f"errors: {checked} refusals checked")
