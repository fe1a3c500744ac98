#!/usr/bin/env python3
"""Checks out = a * b + c from `kjit-run --output-dir DIR` against references
computed exactly here: `fused` rounds once (an FMA), `separate` rounds the
product and then the sum. Both must differ somewhere on the inputs, or the
check could not tell them apart.

usage: fp-fusion.py fused|separate DIR
"""
import ast
import struct
import sys
from fractions import Fraction


def load_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode("latin1"))
    assert header["descr"] == "<f4", header
    body = data[10 + length:]
    return list(struct.unpack(f"<{len(body) // 4}f", body))


def round_f32(value):
    """The float32 nearest to the exact `value`, ties to even (normal range:
    the inputs are in [-1, 1), so nothing here is subnormal but zero)."""
    if value == 0:
        return 0.0
    sign, value = (-1 if value < 0 else 1), abs(value)
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    scale = Fraction(2) ** (23 - exponent)
    # round() on a Fraction rounds half to even.
    return sign * float(round(value * scale) / scale)


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    a, b, c = (load_f32(f"{folder}/{n}.in.npy") for n in "abc")
    out = load_f32(f"{folder}/out.npy")
    fused = [round_f32(Fraction(x) * Fraction(y) + Fraction(z))
             for x, y, z in zip(a, b, c)]
    separate = [round_f32(Fraction(round_f32(Fraction(x) * Fraction(y))) +
                          Fraction(z)) for x, y, z in zip(a, b, c)]
    differ = sum(f != s for f, s in zip(fused, separate))
    if differ == 0:
        sys.exit("the inputs do not tell fused from separate rounding")
    expected = fused if mode == "fused" else separate
    for i, (got, want) in enumerate(zip(out, expected)):
        if got != want:
            sys.exit(f"out[{i}] = {got!r}, expected {want!r} ({mode}); "
                     f"a={a[i]!r} b={b[i]!r} c={c[i]!r}")
    print(f"ok: {len(out)} elements rounded {mode}")


if __name__ == "__main__":
    main()
