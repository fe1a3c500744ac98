# Hostile and odd inputs never crash the extension: every value below, in
# every argument position, as a grid, a stream or a record, ends in a Python
# exception or a correct launch. And threads: several threads launching the
# same kernel, with a compile hook running Python while the others wait for
# that compile, finish without deadlock and with correct results.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples

import math
import os
import sys
import threading

import numpy as np

import kjit

examples = sys.argv[1]
add = kjit.load(os.path.join(examples, "vector_add.mlir")).add
x = np.ones(64, np.float32)
out = np.zeros(64, np.float32)


class RaisingIndex:
    def __index__(self):
        raise ZeroDivisionError("index")


class RaisingInterface:
    @property
    def __array_interface__(self):
        raise MemoryError("interface")


class BadInterface:
    __array_interface__ = {"data": ("not a pointer", False), "typestr": "<f4"}


class NotADictInterface:
    __array_interface__ = [1, 2]


class BadDLPack:
    def __dlpack__(self, stream=None):
        return 42

    def __dlpack_device__(self):
        return (1, 0)


class BadDataPtr:
    dtype = "float32"

    def data_ptr(self):
        return -5


values = [None, True, 0, -1, 2**63, -2**63 - 1, 2**127, -2**200, math.nan, math.inf,
          -0.0, 1e308, "s", b"bytes", bytearray(4), (), (1, 2), [x], {}, object(),
          RaisingIndex(), RaisingInterface(), BadInterface(), NotADictInterface(),
          BadDLPack(), BadDataPtr(), kjit.float32, np.float32(2.5), np.int64(3),
          np.zeros((2, 2), np.float32), np.zeros(0, np.float32), x[::3], len, print,
          type, Ellipsis, NotImplemented, 1j]
outcomes = {"ok": 0, "refused": 0}
# n = 0 (the kernel touches no element) except where n itself is the odd
# value: an array too small for n would be overrun, as in any kernel
# runtime that passes pointers.
for position in range(5):
    for value in values:
        args = [x, x, out, 0, 64]
        args[position] = value
        try:
            add[(1,)](*args[:4], BLOCK=args[4])
            outcomes["ok"] += 1
        except (kjit.Error, TypeError, ValueError, OverflowError, ZeroDivisionError,
                MemoryError):
            outcomes["refused"] += 1
for grid in values:
    try:
        add[grid](x, x, out, 64)
        outcomes["ok"] += 1
    except (kjit.Error, TypeError, ValueError, OverflowError, ZeroDivisionError):
        outcomes["refused"] += 1
for stream in values:
    try:
        add.launch((1,), x, x, out, 64, stream=stream)
        outcomes["ok"] += 1
    except (kjit.Error, TypeError, ValueError, OverflowError):
        outcomes["refused"] += 1
for record in values + ['{"version": 1, "name": "add"}', "[]", "{" * 10000, "\x00"]:
    try:
        add.preload(record)
        outcomes["ok"] += 1
    except (kjit.Error, TypeError, ValueError, OverflowError):
        outcomes["refused"] += 1
assert outcomes["refused"] > 100, outcomes

# The kernel is unharmed.
y = np.arange(64, dtype=np.float32)
out[:] = 0
add[(1,)](y, y, out, 64)
np.testing.assert_array_equal(out, 2 * y)

# Threads: eight threads launch a specialization that is not compiled yet;
# one compiles (running the Python cache hook while the GIL is free), the
# others wait for it; then each checks its result.
hook_threads = []
kjit.knobs.cache_hook = lambda **kwargs: hook_threads.append(threading.get_ident())
errors = []
barrier = threading.Barrier(8)


def worker(index):
    try:
        a = np.full(4096, index, np.float32)
        b = np.ones(4096, np.float32)
        result = np.zeros(4096, np.float32)
        barrier.wait()
        for _ in range(200):
            add[(4,)](a, b, result, 4096, num_warps=8)
        np.testing.assert_array_equal(result, a + b)
    except Exception as error:  # reported below
        errors.append(error)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(timeout=120)
assert not any(thread.is_alive() for thread in threads), "a launching thread hangs"
assert not errors, errors
assert len(hook_threads) == 1, hook_threads
kjit.knobs.cache_hook = None
print("hostile:", outcomes)
