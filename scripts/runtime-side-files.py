#!/usr/bin/python3
"""The runtime side of a configured build tree: kjit's own C and C++ files
that include no LLVM/MLIR header (the model, the disk cache, the runtime,
the plugins, the runtime-side tools, the Python extension, the test plugins
and drivers, the unit tests), as its compile_commands.json compiles them.

  runtime-side-files.py BUILD_DIR            source files, one per line
  runtime-side-files.py BUILD_DIR --objects  their object files (Ninja targets)
  runtime-side-files.py BUILD_DIR --all      every source file of the tree
  runtime-side-files.py BUILD_DIR --database DIR
      also writes DIR/compile_commands.json with those files' first commands
      alone (a file built for several targets is checked once)

A file is left out when its command names LLVM's include folder (from
LLVM_DIR in CMakeCache.txt), and so are files the build generates.
scripts/run-tests.sh compiles the objects with clang-22 (build-clang/) and
scripts/run-clang-tidy.sh checks the sources.
"""
import json
import os
import re
import sys


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.realpath(args[0])
    objects, everything = "--objects" in args, "--all" in args
    database = args[args.index("--database") + 1] if "--database" in args else None
    root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
    llvm_include = None
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            m = re.match(r"LLVM_DIR:[A-Z]+=(.*)/lib/cmake/llvm$", line.strip())
            if m:
                llvm_include = m.group(1) + "/include"
    if not llvm_include:
        sys.exit("runtime-side-files: no LLVM_DIR in %s/CMakeCache.txt" % build)
    seen, out, first = set(), [], []
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    for entry in entries:
        path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        if not path.startswith(root + "/") or path.startswith(build + "/"):
            continue
        command = entry.get("command") or " ".join(entry.get("arguments", []))
        if not everything and llvm_include in command:
            continue
        if objects:
            m = re.search(r" -o (\S+)", command)
            if m:
                obj = os.path.join(entry["directory"], m.group(1))
                out.append(os.path.relpath(obj, build))
        elif path not in seen:
            seen.add(path)
            out.append(path)
            first.append(entry)
    if database:
        os.makedirs(database, exist_ok=True)
        with open(os.path.join(database, "compile_commands.json"), "w") as f:
            json.dump(first, f, indent=1)
    print("\n".join(sorted(out)))


if __name__ == "__main__":
    main()
