#!/usr/bin/env python3
# ===- check.py - independent expected values for the host backend tests -===#
#
# Reads kjit-host-driver's output on stdin (lines "bufK = v v v ..." after each
# launch) and checks the buffers of the LAST launch against values computed
# here, in plain Python, from the kernels' definitions in kernels.c. Prints
# "check ok: ..." or the mismatches (and exits 1).
#
# Usage: check.py vadd N          buf2[i] = buf0[i] + buf1[i] for i < N, else 0
#        check.py reduce T        buf1[p] = sum of buf0[p*T:(p+1)*T]
#        check.py rounds T R      buf0[g] = ((g % T + 1) % T) * R*(R-1)/2
#        check.py warp_rounds T B S
#                                 buf0[g]: warp_rounds (kernels.c) with T
#                                 threads a program, B + w*S rounds in warp w
#        check.py warp_mixed T R  buf0[g]: warp_mixed with T threads, R rounds
#        check.py fpround         buf0[t] = bits of 2/3 rounded down (t odd)
#                                 or to nearest (t even)
#        check.py scalars I1 FP16 BF16 I64 FP32 FP64 I8 U32 U16
#                                 buf0 = the storage of each scalar argument
# ===----------------------------------------------------------------------===#

import math
import struct
import sys
from fractions import Fraction


def last_buffers(text):
    """The bufK lines of the last launch (a later 'launch' line resets)."""
    buffers = {}
    for line in text.splitlines():
        if line.startswith("launch "):
            buffers = {}
        elif line.startswith("buf") and (" = " in line or line.endswith(" =")):
            name, _, values = line.partition(" =")
            buffers[name] = values.split()
    return buffers


def f32(x):
    """x rounded to float32 (to nearest even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def fp16_bits(x):
    # CPython's half packing rounds the double to nearest even directly;
    # it refuses what rounds past the largest half, which is infinity.
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return (0x8000 if x < 0 else 0) | 0x7C00


def bf16_bits(x):
    """bfloat16 bits of the double x, to nearest even, by exact rational
    arithmetic (a different method from the backend's bit manipulation)."""
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    x = abs(x)
    if math.isnan(x):
        return sign | 0x7FC0
    if math.isinf(x):
        return sign | 0x7F80
    if x == 0:
        return sign
    _, e = math.frexp(x)  # x = m * 2^e with 0.5 <= m < 1
    e = max(e, -125)  # 2^-126, the smallest normal, is 0.5 * 2^-125
    k = round(Fraction(x) / Fraction(2) ** (e - 8))  # half to even
    if k == 256:
        k, e = 128, e + 1
    if k < 128:  # subnormal
        return sign | k
    bits = ((e + 126) << 7) | (k - 128)
    return sign | min(bits, 0x7F80)


def next_lane(t, n):
    """The next lane of thread t's warp (of 32; the last warp of n threads
    may be narrower), as a thread id."""
    first = t - t % 32
    width = min(32, n - first)
    return first + (t - first + 1) % width


def warp_rounds(t, n, base, step):
    """warp_rounds' result for thread t of n: warp w runs base + w*step
    rounds, each adding the next lane's (next + 1) * (r + 1)."""
    rounds = base + (t // 32) * step
    return sum((next_lane(t, n) + 1) * (r + 1) for r in range(rounds))


def warp_mixed(t, n, rounds):
    """warp_mixed's result for thread t of n."""
    acc = 0
    for r in range(rounds):
        for j in range(t // 32 + 1):
            acc += (next_lane(t, n) + 1) * (r * 64 + j + 1)
        acc += 1000 * ((t + 32) % n + 1) * (r + 1)
    return acc


def fail(messages):
    for m in messages[:10]:
        print(m)
    print("check FAILED: %d mismatches" % len(messages))
    sys.exit(1)


def compare(what, got, want):
    bad = []
    if len(got) != len(want):
        bad.append("%s: %d values, want %d" % (what, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            bad.append("%s[%d] = %r, want %r" % (what, i, g, w))
    if bad:
        fail(bad)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    b = last_buffers(sys.stdin.read())
    if mode == "vadd":
        n = int(args[0])
        x = [float(v) for v in b["buf0"]]
        y = [float(v) for v in b["buf1"]]
        got = [float(v) for v in b["buf2"]]
        want = [f32(x[i] + y[i]) if i < n else 0.0 for i in range(len(got))]
        compare("buf2", got, want)
        print("check ok: vadd of %d elements" % len(got))
    elif mode == "reduce":
        t = int(args[0])
        x = [float(v) for v in b["buf0"]]
        got = [float(v) for v in b["buf1"]]
        # The values are integers below 2^24: every partial sum is exact in
        # float32, whatever the order of the tree.
        want = [float(sum(x[p * t:(p + 1) * t])) for p in range(len(got))]
        compare("buf1", got, want)
        print("check ok: reduce of %d programs" % len(got))
    elif mode == "rounds":
        t, r = int(args[0]), int(args[1])
        got = [int(v) for v in b["buf0"]]
        want = [((g % t + 1) % t) * (r * (r - 1) // 2) for g in range(len(got))]
        compare("buf0", got, want)
        print("check ok: rounds over %d threads" % len(got))
    elif mode in ("warp_rounds", "warp_mixed"):
        n = int(args[0])
        got = [int(v) for v in b["buf0"]]
        if mode == "warp_rounds":
            base, step = int(args[1]), int(args[2])
            want = [warp_rounds(g % n, n, base, step) for g in range(len(got))]
        else:
            want = [warp_mixed(g % n, n, int(args[1])) for g in range(len(got))]
        compare("buf0", got, want)
        print("check ok: %s over %d threads" % (mode, len(got)))
    elif mode == "fpround":
        third = Fraction(2, 3)
        nearest = f32(2.0 / 3.0)
        down = nearest
        if Fraction(nearest) > third:
            down = struct.unpack("<f", struct.pack("<I", f32_bits(nearest) - 1))[0]
        got = [int(v) for v in b["buf0"]]
        want = [f32_bits(down if i % 2 else nearest) for i in range(len(got))]
        compare("buf0", got, want)
        print("check ok: fpround %#x %#x" % (want[0], want[1]))
    elif mode == "scalars":
        i1, h, bf, i64, fp32, fp64, i8, u32, u16 = args
        want = [
            int(i1),
            fp16_bits(float(h)),
            bf16_bits(float(bf)),
            int(i64) & (2**64 - 1),
            f32_bits(float(fp32)),
            struct.unpack("<Q", struct.pack("<d", float(fp64)))[0],
            int(i8) & 0xFF,
            int(u32),
            int(u16),
        ]
        compare("buf0", [int(v) for v in b["buf0"]], want)
        print("check ok: scalars " + " ".join("%#x" % w for w in want))
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
