#!/usr/bin/env python3
"""Checks kjit-run's outputs against references computed here, in plain
Python (no numpy: CI need not have it).

usage: reference.py KERNEL DIR [NAME=VALUE ...]

DIR holds NAME.in.npy (before the first launch) and NAME.npy (after the
launches) for every tensor argument, as `kjit-run --output-dir` writes them.
"""
import ast
import math
import struct
import sys

# bf16 has no numpy dtype: kjit-run writes its bits as "<u2", which
# tensor(..., bf16=True) decodes.
FORMATS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "<u4": "I",
           "|u1": "B", "|i1": "b", "<f2": "e", "<u2": "H"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    fmt = FORMATS[header["descr"]]
    count = math.prod(header["shape"])
    values = struct.unpack(f"<{count}{fmt}", data[start + length:])
    return list(values), header["shape"]


def close(actual, expected, rel, abs_):
    return abs(actual - expected) <= abs_ + rel * abs(expected)


def compare(name, actual, expected, rel=0.0, abs_=0.0):
    if len(actual) != len(expected):
        sys.exit(f"{name}: {len(actual)} elements, expected {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not close(a, e, rel, abs_):
            sys.exit(f"{name}[{i}] = {a}, expected {e}")
    print(f"ok: {name} matches the reference ({len(actual)} elements)")


def bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def f32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def main():
    kernel, folder = sys.argv[1], sys.argv[2]
    params = dict(arg.split("=", 1) for arg in sys.argv[3:])

    def tensor(name, when="", bf16_bits=False):
        values = load(f"{folder}/{name}{when}.npy")[0]
        return [bf16(v) for v in values] if bf16_bits else values

    if kernel == "add":
        x, y = tensor("x"), tensor("y")
        compare("out", tensor("out"), [f32(a + b) for a, b in zip(x, y)])
    elif kernel == "saxpy":
        alpha = float(params["a"])
        x, y = tensor("x"), tensor("y", ".in")
        # fma rounds once: compute in double and round to f32.
        compare("y", tensor("y"), [f32(alpha * a + b) for a, b in zip(x, y)],
                rel=1e-6)
    elif kernel == "softmax":
        rows, cols = int(params["rows"]), int(params["n_cols"])
        # Rows are `stride` apart; the columns past n_cols keep their value.
        stride = int(params.get("stride", cols))
        data, before = tensor("in"), tensor("out", ".in")
        expected = []
        for r in range(rows):
            row = data[r * stride:r * stride + cols]
            peak = max(row)
            exps = [math.exp(v - peak) for v in row]
            total = sum(exps)
            expected += [e / total for e in exps]
            expected += before[r * stride + cols:(r + 1) * stride]
        compare("out", tensor("out"), expected, rel=1e-5, abs_=1e-7)
    elif kernel == "matmul":
        m, n, k = int(params["M"]), int(params["N"]), int(params["K"])
        a, b = tensor("a"), tensor("b")
        expected = [sum(a[i * k + p] * b[p * n + j] for p in range(k))
                    for i in range(m) for j in range(n)]
        compare("c", tensor("c"), expected, rel=1e-5, abs_=1e-4)
    elif kernel in ("matmul_bf16", "matmul_fp16"):
        # Inputs and output are 16-bit; the product sums in f32 and rounds
        # once to 16 bits (8 significant bits for bf16, 11 for fp16).
        m, n, k = int(params["M"]), int(params["N"]), int(params["K"])
        lda = int(params.get("stride_am", k))
        ldb = int(params.get("stride_bk", n))
        ldc = int(params.get("stride_cm", n))
        wide = kernel == "matmul_bf16"
        a, b = tensor("a", bf16_bits=wide), tensor("b", bf16_bits=wide)
        c, before = tensor("c", bf16_bits=wide), tensor("c", ".in", wide)
        expected, actual = [], []
        for i in range(m):
            for j in range(n):
                expected.append(sum(a[i * lda + p] * b[p * ldb + j]
                                    for p in range(k)))
                actual.append(c[i * ldc + j])
        rel = 2.0 ** -7 if wide else 2.0 ** -10
        compare("c", actual, expected, rel=rel, abs_=1e-4 * max(k, 1))
        # Columns past N of a row wider than N keep their values.
        kept = [(c[i * ldc + j], before[i * ldc + j])
                for i in range(m) for j in range(n, ldc)]
        compare("c padding", [x for x, _ in kept], [y for _, y in kept])
    elif kernel == "scaled_residual":
        scale, shift = float(params["SCALE"]), float(params["SHIFT"])
        x, y = tensor("x"), tensor("y", ".in")
        compare("y", tensor("y"),
                [f32(b + f32(a * scale + shift)) for a, b in zip(x, y)],
                rel=1e-6)
    else:
        sys.exit(f"no reference for kernel {kernel}")


main()
