# The sanitizer builds' runtime options (KJIT_SANITIZE, docs/Testing.md),
# shared by test/lit.cfg.py and unittests/lit.cfg.py. Every option is here
# with its reason; a plain build gets none of them.
import os

# abort_on_error: a finding ends the process with SIGABRT, which a test's
# `not` does not turn into a pass (a plain non-zero exit it would).
COMMON = ["abort_on_error=1", "print_stacktrace=1"]


def asan_options():
    return ":".join(COMMON + [
        # The host backend installs its own SIGSEGV/SIGBUS/SIGFPE/SIGILL
        # handlers for kernel faults (plugins/host/Faults.c, the fault tests)
        # and chains any other fault to the handler it found, ASan's:
        # ASan must let it (handle_segv stays on, so kjit's own faults
        # are still ASan reports).
        "allow_user_segv_handler=1",
        # ASan gives every thread it starts an alternate signal stack;
        # the backend uses one it finds, and needs one for stack
        # overflows on fibers and workers.
        "use_sigaltstack=1",
        "detect_leaks=1",
        # LLVM's BumpPtrAllocator, inlined from the headers into kjit's
        # instrumented code, poisons a new slab and unpoisons what it hands
        # out; Debian's libMLIR, not instrumented, allocates from the same
        # slabs (an MLIRContext's attribute and location storage) without
        # unpoisoning, and its next write was reported as use-after-poison
        # (a new slab started by a kjit attribute, then a FileLineColRange
        # written by the parser). kjit poisons nothing itself, so manual
        # poisoning is off and only the allocator's false reports go.
        "allow_user_poisoning=0",
    ])


def configure(config):
    sanitizers = [s for s in config.kjit_sanitize.split(",") if s]
    # `env %preload-env LD_PRELOAD=SHIM PROGRAM`: what a test that preloads
    # one of its (uninstrumented) shims into a kjit program adds to the
    # environment. Under ASan: the runtime would refuse to start when a
    # preloaded library comes before it ("ASan runtime does not come first
    # in initial library list"). The check guards against a runtime loaded
    # late, by dlopen into a program without it; a kjit program links the
    # runtime, and the test shims (test/Cache: MapsProbe, FaultShim) define
    # no allocator, so only for them is it turned off.
    preload_env = ""
    if "address" in sanitizers:
        preload_env = "ASAN_OPTIONS=%s:verify_asan_link_order=0" % asan_options()
    config.substitutions.append(("%preload-env", preload_env))
    if not sanitizers:
        return
    # Tests that cannot run under a sanitizer say `UNSUPPORTED: asan` (or
    # tsan, ubsan), with the reason next to it.
    names = {"address": "asan", "undefined": "ubsan", "thread": "tsan"}
    for s in sanitizers:
        config.available_features.add(names[s])
    common = COMMON
    suppressions = os.path.join(config.kjit_source_dir, "test", "sanitizers")
    if "address" in sanitizers:
        config.environment["ASAN_OPTIONS"] = asan_options()
        config.environment["LSAN_OPTIONS"] = ":".join([
            "suppressions=" + os.path.join(suppressions, "lsan.supp"),
            "print_suppressions=0"])
    if "undefined" in sanitizers:
        config.environment["UBSAN_OPTIONS"] = ":".join(common + ["halt_on_error=1"])
    if "thread" in sanitizers:
        config.environment["TSAN_OPTIONS"] = ":".join(common + [
            "halt_on_error=1", "second_deadlock_stack=1"])
