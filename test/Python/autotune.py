# kjit.autotune on the host backend: Triton's surface (Config, the key,
# best_config, a decorator), the choice per key, reset_to_zero and
# restore_value around the trials, a configuration that cannot run skipped,
# and the errors, checked against NumPy.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %S/../Runtime/Inputs

import os
import sys

import numpy as np

import kjit

inputs = sys.argv[1]
count = kjit.load(os.path.join(inputs, "count.mlir")).count

# count adds 1 to o[0] and C to o[1] per launch.
configs = [kjit.Config({"C": 1}, num_warps=1), kjit.Config({"C": 2}),
           kjit.Config({"C": 3}, num_warps=64)]  # 2048 threads: cannot run
tuned = kjit.autotune(count, configs=configs, key=["n"],
                      reset_to_zero=["o"])
assert tuned.best_config is None
o = np.zeros(2, np.int32)
tuned[(1,)](o, 5)
best = tuned.best_config
assert best is configs[0] or best is configs[1], best
# The trials' launches were zeroed away: o holds the one launch after them.
np.testing.assert_array_equal(o, [1, best.kwargs["C"]])
# The same key again: the choice, one more launch, nothing zeroed.
tuned[(1,)](o, 5)
np.testing.assert_array_equal(o, [2, 2 * best.kwargs["C"]])
assert tuned.best_config is best

# restore_value: the trials' changes are undone before the launch.
keep = kjit.autotune(configs=[{"C": 1}, {"C": 2}], key=["n"],
                     restore_value=["o"])(count)
o = np.array([100, 1000], np.int32)
keep[(1,)](o, 6)
chosen = keep.best_config.kwargs["C"]
np.testing.assert_array_equal(o, [101, 1000 + chosen])

# Errors, by name, when the first launch meets the kernel.
def raises(call, kind, text):
    try:
        call()
    except kind as error:
        assert text in str(error), (text, str(error))
    else:
        raise AssertionError(f"no {kind.__name__}: {text}")


o = np.zeros(2, np.int32)
raises(lambda: kjit.autotune(count, configs=[{"n": 1}], key=[])[(1,)](o, 5),
       kjit.ArgumentError,
       "autotune config 0 of kernel 'count': 'n' is not a constexpr "
       "parameter (constexprs: C)")
raises(lambda: kjit.autotune(count, configs=[{"C": 1}], key=["m"])[(1,)](o, 5),
       kjit.ArgumentError,
       "autotune key of kernel 'count': 'm' names no parameter")
raises(lambda: kjit.autotune(count, configs=[{"C": "x"}], key=[]),
       kjit.ArgumentError, "a value is an int, a float or a bool")
raises(lambda: kjit.autotune(count, configs=[kjit.Config({"C": 1}, num_warps=1)],
                             key=["n"])[(1,)](o, 5, num_warps=2), kjit.Error,
    "'num_warps' is set by the autotuner's configurations and by this call")
raises(lambda: kjit.autotune(count, configs=[], key=[]), ValueError,
       "needs at least one Config")
only_bad = kjit.autotune(count, configs=[kjit.Config({"C": 1}, num_warps=64)])
raises(lambda: only_bad[(1,)](o, 5), kjit.Error,
       "no configuration could run for key [o=i32]")


# A trial callback's exception is the launch's: here zeroing an array
# whose item assignment raises.
class Boom(Exception):
    pass


class Unzeroable(np.ndarray):
    def __setitem__(self, index, value):
        raise Boom("cannot zero this array")


failing = kjit.autotune(count, configs=[{"C": 1}], key=["n"],
                        reset_to_zero=["o"])
raises(lambda: failing[(1,)](np.zeros(2, np.int32).view(Unzeroable), 5),
       Boom, "cannot zero this array")
print("ok")
