#!/usr/bin/env python3
"""Launches a kernel for every dtype of the runtime's table
(include/kjit/Model/DType.h, read here so that a new row is tested without
editing this script): as a typed pointer, as an `!kjit.any` parameter cast
to that pointer, and as a scalar parameter. A dtype that kernel IR has no
type for must be refused at bind time with a message naming it; a scalar
type kernel IR does not take must be refused by the verifier.

usage: all-dtypes.py DTYPE_H WORKDIR   (kjit-run and kjit-opt on PATH)
"""
import os
import re
import subprocess
import sys

ROW = re.compile(r'\{DType::\w+,\s*"(\w+)",\s*DTypeKind::(\w+),[^"]*"([^"]*)"')


def run(args):
    done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def fail(dtype, what, output):
    sys.exit(f"FAIL {dtype} {what}:\n{output}")


def copy_kernel(name, param, ptr, cast=""):
    """p[0] = p[1], through a pointer read from `param`."""
    body = f"  %q = kjit.cast %p : !kjit.any to {ptr}\n" if cast else ""
    q = "%q" if cast else "%p"
    element = ptr[len("!kjit.ptr<"):-1]
    value = re.sub(r"^ui", "i", element)
    return (f"kjit.kernel @{name}(%p: {param}) {{\n{body}"
            "  %c0 = arith.constant 0 : i32\n  %c1 = arith.constant 1 : i32\n"
            f"  %v = kjit.load {q}[%c1] : {ptr}, i32 -> {value}\n"
            f"  kjit.store %v, {q}[%c0] : {value}, {ptr}, i32\n"
            "  kjit.return\n}\n")


def main():
    header, work = sys.argv[1], sys.argv[2]
    table = open(header).read()
    rows = ROW.findall(table)
    if not rows or len(rows) != table.count("{DType::"):
        sys.exit(f"could not read the dtype table of {header}")
    os.makedirs(work, exist_ok=True)
    for name, kind, mlir in rows:
        fp8 = mlir.startswith("f8") or (kind == "Float" and not mlir)
        # fp8 tensors only take zeros in kjit-run; the others show the copy.
        init, copied = ("zeros", "[0x00, 0x00]") if fp8 else (
            "arange", "[true, true]" if kind == "Bool" else "[1, 1]")
        tensor = f"p={name}[2]:{init}"
        if not mlir:
            # No kernel IR type: only an `!kjit.any` parameter could take it.
            path = f"{work}/{name}-any.mlir"
            with open(path, "w") as f:
                f.write("kjit.kernel @k(%p: !kjit.any) { kjit.return }\n")
            rc, out = run(["kjit-run", path, "--kernel", "k", "--arg", tensor])
            want = (f"argument 'p' of kernel 'k': a tensor of {name} cannot be "
                    f"passed to a kernel: kernel IR has no type for {name}")
            if rc == 0 or want not in out:
                fail(name, "refusal", out)
            print(f"refused {name} at bind time: {want}")
            continue
        ptr = f"!kjit.ptr<{mlir}>"
        path = f"{work}/{name}.mlir"
        with open(path, "w") as f:
            f.write(copy_kernel("typed", ptr, ptr))
            f.write(copy_kernel("untyped", "!kjit.any", ptr, cast=True))
        for kernel in ("typed", "untyped"):
            rc, out = run(["kjit-run", path, "--kernel", kernel, "--arg", tensor])
            if rc != 0 or f"p = {name}[2] {copied}" not in out:
                fail(name, kernel, out)
            # The cuda target compiles it too (PTX; nothing needs a GPU).
            record = f"{work}/{name}-{kernel}.json"
            rc, out = run(["kjit-run", path, "--kernel", kernel, "--warmup",
                           "--arg", tensor, "--record-out", record])
            if rc == 0:
                rc, out = run(["kjit-opt", path, "--kjit-cuda-pipeline=record="
                               + record, "-o", os.devnull])
            if rc != 0:
                fail(name, kernel + " (cuda)", out)
        print(f"ok {name} pointer")
        # As a scalar: unsigned integers are signless with kjit.unsigned.
        scalar = re.sub(r"^ui", "i", mlir)
        attrs = " {kjit.unsigned}" if mlir.startswith("ui") else ""
        path = f"{work}/{name}-scalar.mlir"
        with open(path, "w") as f:
            f.write(f"kjit.kernel @k(%v: {scalar}{attrs}, %p: {ptr}) {{\n"
                    "  %c0 = arith.constant 0 : i32\n"
                    f"  kjit.store %v, %p[%c0] : {scalar}, {ptr}, i32\n"
                    "  kjit.return\n}\n")
        value = "true" if kind == "Bool" else "3"
        rc, out = run(["kjit-run", path, "--kernel", "k", "--arg", f"v={value}",
                       "--arg", f"p={name}[2]:zeros"])
        if fp8:
            if rc == 0 or "parameters are i1, i8, i16, i32, i64, f16" not in out:
                fail(name, "scalar refusal", out)
            print(f"refused {name} as a scalar by the verifier")
            continue
        want = "[true, false]" if kind == "Bool" else "[3, 0]"
        if rc != 0 or f"p = {name}[2] {want}" not in out:
            fail(name, "scalar", out)
        print(f"ok {name} scalar")
    print(f"checked {len(rows)} dtypes")


if __name__ == "__main__":
    main()
