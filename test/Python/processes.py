# The package across processes: the abi3 module in a fresh interpreter, a
# warmup record preloaded by another process, a warm process that finds its
# kernel on disk and never loads LLVM, reference counts that do not grow
# over 100,000 launches, and Ctrl-C during a compile.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples %t.record

import gc
import json
import os
import signal
import subprocess
import sys
import threading

import numpy as np

import kjit

examples, record_path = sys.argv[1], sys.argv[2]
vector_add = os.path.join(examples, "vector_add.mlir")

# The native module is the stable-ABI build.
assert kjit._kjit.__file__.endswith("_kjit.abi3.so"), kjit._kjit.__file__


def child(code, cache=None):
    env = dict(os.environ)
    if cache is not None:
        env["KJIT_CACHE_DIR"] = cache
    result = subprocess.run([sys.executable, "-c", code], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


# Warmup here, preload in a process with an empty cache: its launch then
# compiles nothing.
mod = kjit.load(vector_add)
record = mod.add.warmup(kjit.float32, kjit.float32, kjit.float32, 4096, BLOCK=512,
                        num_warps=2)
with open(record_path, "w") as f:
    json.dump(record, f)
fresh_cache = record_path + ".fresh-cache"
out = child(f"""
import json, numpy as np, kjit
mod = kjit.load({vector_add!r})
mod.add.preload(json.load(open({record_path!r})))
before = mod.add.stats()["host"]
x = np.ones(4096, np.float32); out = np.zeros(4096, np.float32)
mod.add[(8,)](x, x, out, 4096, BLOCK=512, num_warps=2)
assert (out == 2).all()
after = mod.add.stats()["host"]
print(before["compiles"] + before["disk_hits"], after["compiles"] + after["disk_hits"])
""", cache=fresh_cache)
assert out.split() == ["1", "1"], out

# A warm process: the kernel and the analysis come from the disk cache, and
# neither LLVM nor MLIR is loaded.
x = np.ones(4096, np.float32)
out_array = np.zeros(4096, np.float32)
mod.add[(4,)](x, x, out_array, 4096)
out = child(f"""
import numpy as np, kjit
mod = kjit.load({vector_add!r})
x = np.ones(4096, np.float32); out = np.zeros(4096, np.float32)
mod.add[(4,)](x, x, out, 4096)
assert (out == 2).all()
maps = open("/proc/self/maps").read()
print(kjit.compiler_loaded(), "libLLVM" in maps or "libMLIR" in maps,
      mod.add.stats()["host"]["compiles"])
""")
assert out.split() == ["False", "False", "0"], out

# A warm first launch in a process that already runs threads (as PyTorch's
# does) does not register the process for expedited membarriers: that
# registration waits for an RCU grace period, 10-20 ms there. The shutdown,
# the one caller of the barrier, registers. (Linux 6.3+ says which
# registrations a process holds; an older kernel skips the check.)
out = child(f"""
import ctypes, threading, numpy as np, kjit
libc = ctypes.CDLL(None, use_errno=True)
def registrations():
    return libc.syscall(324, 1 << 9, 0, 0)  # membarrier GET_REGISTRATIONS
stop = threading.Event()
threads = [threading.Thread(target=stop.wait) for _ in range(4)]
for t in threads: t.start()
mod = kjit.load({vector_add!r})
x = np.ones(4096, np.float32); out = np.zeros(4096, np.float32)
mod.add[(4,)](x, x, out, 4096)
assert (out == 2).all()
before = registrations()
kjit._kjit._shutdown()
after = registrations()
stop.set()
expedited = 1 << 4  # MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED
print("skip" if before < 0 else f"{{bool(before & expedited)}} {{bool(after & expedited)}}")
""")
assert out.strip() in ("skip", "False True"), out

# At exit the kernels are unloaded while the interpreter still runs; a
# launch after that (another atexit handler's) raises instead of touching
# freed kernels.
out = child(f"""
import numpy as np, kjit
mod = kjit.load({vector_add!r})
x = np.ones(16, np.float32)
bound = mod.add.bind((1,), x, x, x, 16)
kjit._kjit._shutdown()
for call in (lambda: mod.add[(1,)](x, x, x, 16), bound, lambda: mod.kernel_names(),
             lambda: mod.add.warmup(x, x, x, 16), lambda: kjit.load({vector_add!r})):
    try:
        call()
        print("launched after shutdown")
    except kjit.Error as error:
        print(error)
print([p["name"] for p in mod.add.params])
""")
assert out.count("kjit has shut down: the interpreter is exiting") == 5, out
assert "['x', 'y', 'out', 'n', 'BLOCK']" in out, out

# Reference counts: 100,000 launches, through a launcher, a callable grid,
# launch() and a bound handle, leave every object's count as it was.
y = np.ones(4096, np.float32)
n = 4096
grid_tuple = (4,)
grid_callable = lambda meta: (kjit.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
bound = mod.add.bind(grid_tuple, x, y, out_array, n)
watched = [x, y, out_array, n, grid_tuple, grid_callable, mod.add, None, True]
# The kernel keeps its last subscript's grid and launcher: another grid
# before each count keeps that out of the comparison.
mod.add[(99,)]
before = [sys.getrefcount(o) for o in watched]
gc.collect()
objects_before = len(gc.get_objects())
for i in range(25_000):
    mod.add[grid_tuple](x, y, out_array, n)
    mod.add[grid_callable](x, y, out_array, n=n)
    mod.add.launch(grid_tuple, x, y, out_array, n, stream=0)
    bound(x, y)
mod.add[(99,)]
gc.collect()
after = [sys.getrefcount(o) for o in watched]
# None and True are shared with the interpreter: only a leak of thousands
# would show.
assert before[:7] == after[:7], (before, after)
assert all(abs(a - b) < 100 for a, b in zip(before[7:], after[7:])), (before, after)
assert len(gc.get_objects()) - objects_before < 100, len(gc.get_objects()) - objects_before

# Ctrl-C during a compile: the compile finishes (its kernel is cached), then
# the launch raises KeyboardInterrupt.
# (A parent that ignores SIGINT, as lit's workers may, makes Python leave it
# ignored: the handler is installed here.)
signal.signal(signal.SIGINT, signal.default_int_handler)
started = threading.Event()
kjit.knobs.cache_hook = lambda **kwargs: started.set()
main = threading.get_ident()


def interrupt():
    started.wait()
    signal.pthread_kill(main, signal.SIGINT)


thread = threading.Thread(target=interrupt)
thread.start()
try:
    mod.add[(4,)](x, y, out_array, n, BLOCK=1024, num_warps=8)
    raise AssertionError("Ctrl-C was lost")
except KeyboardInterrupt:
    pass
thread.join()
kjit.knobs.cache_hook = None
stats = mod.add.stats()["host"]
compiles = stats["compiles"]
mod.add[(4,)](x, y, out_array, n, BLOCK=1024, num_warps=8)
assert mod.add.stats()["host"]["compiles"] == compiles
print("processes: OK")
