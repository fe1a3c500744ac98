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
# A second key's tuning, on another tensor, restores that tensor's values,
# never the first call's.
other = np.array([7, 70], np.int32)
keep[(1,)](other, 9)
chosen = keep.best_config.kwargs["C"]
np.testing.assert_array_equal(other, [8, 70 + chosen])

# prune_configs_by (Triton's): the early prune sees every configuration and
# the call's arguments by name; the performance model then keeps the top_k
# lowest estimates. Only the survivor (C = 4) is compiled, timed and
# launched; the trials' launches are zeroed away, so o holds the one launch
# after them.
seen = []


def early(configs, named):
    seen.append((len(configs), named["n"], type(named["o"]).__name__))
    return [c for c in configs if c.kwargs["C"] != 1]


def model(**meta):
    seen.append(("model", meta["C"], meta["n"]))
    return -meta["C"]  # the largest C is thought fastest


pruned_configs = [kjit.Config({"C": c}) for c in (1, 2, 3, 4)]
pruned = kjit.autotune(count, configs=pruned_configs, key=["n"],
                       reset_to_zero=["o"],
                       prune_configs_by={"early_config_prune": early,
                                         "perf_model": model, "top_k": 1})
o = np.zeros(2, np.int32)
pruned[(1,)](o, 9)
assert pruned.best_config is pruned_configs[3], pruned.best_config
np.testing.assert_array_equal(o, [1, 4])
assert seen == [(4, 9, "ndarray"), ("model", 2, 9), ("model", 3, 9),
                ("model", 4, 9)], seen
# A fraction of the configurations.
half = kjit.autotune(count, configs=pruned_configs, key=["n"],
                     prune_configs_by={"perf_model": lambda **m: m["C"],
                                       "top_k": 0.5})
half[(1,)](np.zeros(2, np.int32), 9)
assert half.best_config in pruned_configs[:2], half.best_config

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
# Pruning's errors: an unknown member, a prune function that raises,
# returns a configuration of its own, or keeps none.
raises(lambda: kjit.autotune(count, configs=[{"C": 1}],
                             prune_configs_by={"topk": 1}),
       ValueError, "prune_configs_by takes early_config_prune, perf_model "
       "and top_k, not topk")


def broken(configs, named):
    raise Boom("no prune today")


raises(lambda: kjit.autotune(count, configs=[{"C": 1}], key=["n"],
                             prune_configs_by={"early_config_prune": broken})
       [(1,)](np.zeros(2, np.int32), 5), Boom, "no prune today")
raises(lambda: kjit.autotune(
    count, configs=[{"C": 1}], key=["n"],
    prune_configs_by={"early_config_prune": lambda c, n: [kjit.Config({"C": 1})]})
    [(1,)](np.zeros(2, np.int32), 5), ValueError,
    "the prune function returned C: 1, which is not one of the configurations")
raises(lambda: kjit.autotune(
    count, configs=[{"C": 1}], key=["n"],
    prune_configs_by={"early_config_prune": lambda c, n: []})
    [(1,)](np.zeros(2, np.int32), 5), kjit.Error,
    "kernel 'count': the prune function kept no configuration for key "
    "[n=5; o=i32]; it must keep at least one")
# The native half's own checks of what the prune callable returns (the
# Python half always returns a list of indices).
for returned, text in (("x", "it returned no list"),
                       (["a"], "it returned a list of other than "
                               "configuration indices")):
    state = count._autotuner([{"C": 1}], ["n"], None, None,
                             lambda returned=returned: returned)
    raises(lambda: count._autotune_launch(state, (1,),
                                          np.zeros(2, np.int32), 5),
           kjit.Error, "kernel 'count': the prune function failed for key "
           "[n=5; o=i32]: " + text)
print("ok")
