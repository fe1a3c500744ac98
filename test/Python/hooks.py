# Python hooks: the compile hooks with Triton's arguments (and the
# specialization keys they show for divisible, unaligned and value-1
# arguments), a cache hook that skips, launch hook chains with lazy
# metadata, pre-run hooks, and exceptions from each reaching the caller
# with the runtime still usable.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples

import os
import sys

import numpy as np

import kjit

examples = sys.argv[1]
mod = kjit.load(os.path.join(examples, "vector_add.mlir"))
add = mod.add
n = 4096
x = np.arange(n, dtype=np.float32)
y = np.ones(n, np.float32)
out = np.zeros(n, np.float32)
grid = (kjit.cdiv(n, 1024),)

events = []


def cache_hook(**kwargs):
    events.append(("cache", kwargs))
    return False


def compiled_hook(**kwargs):
    events.append(("compiled", kwargs))


kjit.knobs.cache_hook = cache_hook
kjit.knobs.compiled_hook = compiled_hook
add[grid](x, y, out, n)
np.testing.assert_array_equal(out, x + y)
assert [kind for kind, _ in events] == ["cache", "compiled"], events
cache = events[0][1]
assert set(cache) == {"key", "repr", "fn", "compile", "is_manual_warmup",
                      "already_compiled"}, cache.keys()
assert cache["fn"].name == "add" and cache["fn"].target == "host"
assert cache["is_manual_warmup"] is False and cache["already_compiled"] is False
compile_info = cache["compile"]
assert compile_info["signature"] == {"x": "*kfp32", "y": "*kfp32", "out": "*fp32",
                                     "n": "i32"}, compile_info["signature"]
assert sorted(compile_info["attrs"]["divisibility_16"]) == ["n", "out", "x", "y"]
assert compile_info["constants"] == {"BLOCK": 1024}
assert compile_info["num_warps"] == 4 and compile_info["device"] == 0
# specialization_data is the record kernel.preload() takes.
add.preload(compile_info["specialization_data"])
assert "add[" in cache["repr"] and "x: *kfp32" in cache["repr"], cache["repr"]
compiled = events[1][1]
assert compiled["key"] == cache["key"]
assert compiled["compile"]["artifact_format"], compiled["compile"]

# A hit runs no compile hook.
events.clear()
add[grid](x, y, out, n)
assert events == [], events

# Specialization keys: an unaligned pointer loses D, n == 1 gets 1, and
# n = 4097 is neither.
events.clear()
add[(1,)](x[1:], y[1:], out[1:], 1)
spec = events[0][1]["compile"]["spec"]
assert spec == {"x": "N", "y": "N", "out": "N", "n": "1"}, spec
events.clear()
add[(5,)](x, y, np.zeros(4097, np.float32), 4097)
spec = events[0][1]["compile"]["spec"]
assert spec == {"x": "D", "y": "D", "out": "D", "n": "N"}, spec

# A manual warmup says so.
events.clear()
record = add.warmup(kjit.float32, kjit.float32, kjit.float32, n, BLOCK=512)
assert events[0][1]["is_manual_warmup"] is True
assert record["constants"] == {"BLOCK": 512}

# A truthy cache hook skips the compile: nothing is launched, and the next
# launch asks again.
kjit.knobs.cache_hook = lambda **kwargs: True
out[:] = 0
add[grid](x, y, out, n, BLOCK=128)
assert not out.any()
kjit.knobs.cache_hook = cache_hook

# A cache hook that raises: the exception reaches the caller, nothing is
# compiled, and the runtime goes on.


def raising_cache_hook(**kwargs):
    raise RuntimeError("cache hook refused")


kjit.knobs.cache_hook = raising_cache_hook
try:
    add[grid](x, y, out, n, BLOCK=64)
    raise AssertionError("the cache hook's exception was lost")
except RuntimeError as error:
    assert str(error) == "cache hook refused"
kjit.knobs.cache_hook = cache_hook
out[:] = 0
add[grid](x, y, out, n, BLOCK=64)
np.testing.assert_array_equal(out[:64 * 4], (x + y)[:64 * 4])

# A compiled hook that raises: the kernel was compiled and launched, then
# the exception is raised; the next launch is a plain hit.


def raising_compiled_hook(**kwargs):
    raise ValueError("compiled hook failed")


kjit.knobs.compiled_hook = raising_compiled_hook
out[:] = 0
try:
    add[grid](x, y, out, n, BLOCK=32)
    raise AssertionError("the compiled hook's exception was lost")
except ValueError as error:
    assert str(error) == "compiled hook failed"
kjit.knobs.compiled_hook = None
kjit.knobs.cache_hook = None
out[:] = 0
add[(n // 32,)](x, y, out, n, BLOCK=32)
np.testing.assert_array_equal(out, x + y)

# Launch hooks: chains in order, exit in reverse, lazy metadata.
calls = []


def enter_a(metadata):
    calls.append(("enter_a", metadata["name"], metadata["grid"], metadata["num_warps"]))


def enter_b(metadata):
    calls.append(("enter_b", len(metadata)))


def exit_a(metadata):
    calls.append(("exit_a", metadata["launch_status"]))


def exit_b(metadata):
    calls.append(("exit_b", metadata["key"] != ""))


kjit.knobs.launch_enter_hook.add(enter_a)
kjit.knobs.launch_enter_hook.add(enter_b)
kjit.knobs.launch_exit_hook.add(exit_a)
kjit.knobs.launch_exit_hook.add(exit_b)
add[grid](x, y, out, n, num_warps=2)
assert calls[0] == ("enter_a", "add", (4, 1, 1), 2), calls
assert calls[1][0] == "enter_b" and calls[1][1] >= 6, calls
assert calls[2:] == [("exit_b", True), ("exit_a", 0)], calls
kjit.knobs.launch_enter_hook.remove(enter_b)
kjit.knobs.launch_exit_hook.remove(exit_b)
calls.clear()
add[grid](x, y, out, n)
assert [c[0] for c in calls] == ["enter_a", "exit_a"], calls

# A launch-enter hook that raises does not stop the launch; its exception
# is raised when the launch returns.


def raising_enter(metadata):
    raise KeyError("enter hook failed")


kjit.knobs.launch_enter_hook.add(raising_enter)
out[:] = 0
try:
    add[grid](x, y, out, n)
    raise AssertionError("the launch hook's exception was lost")
except KeyError:
    pass
np.testing.assert_array_equal(out, x + y)
kjit.knobs.launch_enter_hook.remove(raising_enter)
kjit.knobs.launch_enter_hook.remove(enter_a)
kjit.knobs.launch_exit_hook.remove(exit_a)

# Pre-run hooks: the arguments as given, before every launch and warmup;
# one that raises aborts the launch.
seen = []
add.add_pre_run_hook(lambda *args, **kwargs: seen.append((args, kwargs)))
out[:] = 0
add[grid](x, y, out, n=n)
assert len(seen) == 1 and seen[0][0][0] is x and seen[0][1] == {"n": n}
add.warmup(kjit.float32, kjit.float32, kjit.float32, n)
assert len(seen) == 2


def veto(*args, **kwargs):
    raise PermissionError("pre-run hook vetoed")


add.add_pre_run_hook(veto)
out[:] = 0
try:
    add[grid](x, y, out, n)
    raise AssertionError("the pre-run hook did not abort the launch")
except PermissionError:
    pass
assert not out.any()
add.pre_run_hooks.remove(veto)
add[grid](x, y, out, n)
np.testing.assert_array_equal(out, x + y)

try:
    kjit.knobs.cache_hook = 5
    raise AssertionError("a non-callable hook was accepted")
except TypeError:
    pass
try:
    add.add_pre_run_hook(5)
    raise AssertionError("a non-callable pre-run hook was accepted")
except TypeError:
    pass
print("hooks: OK")
