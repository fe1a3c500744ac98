"""Compares an install tree with the list docs/Install.md promises.

Usage: tree.py DOC PREFIX BUILD_TYPE BUILD_LIB_DIR

The list is the fenced block between the markers
<!-- begin install-tree --> and <!-- end install-tree --> of DOC: one path
per line, relative to the prefix. `<config>` in a path stands for the build
type in lower case (kjitTargets-release.cmake). A path followed by
`# built when ...` is a plugin the build makes only on some machines (the
Redis store needs libhiredis-dev, the Python package python3-dev): it is
promised exactly when the build has it in BUILD_LIB_DIR (the package: in
BUILD_LIB_DIR/../python/kjit). Prints what differs and exits 1, or prints
"install tree ok: N files" and exits 0.
"""
import os
import sys


def promised(doc, build_type, build_lib_dir):
    text = open(doc).read()
    begin = text.find("<!-- begin install-tree")
    end = text.find("<!-- end install-tree -->")
    if begin < 0 or end < begin:
        sys.exit("tree.py: %s has no install-tree block" % doc)
    lines = text[begin:end].splitlines()[1:]
    paths = set()
    for line in lines:
        if not line.strip() or line.startswith("```"):
            continue
        path, _, condition = line.partition("#")
        path = path.strip().replace("<config>", build_type.lower())
        # The Python package is built beside lib/, in python/kjit.
        built_in = (os.path.join(build_lib_dir, "..", "python", "kjit")
                    if "/python3/" in path else build_lib_dir)
        if condition and not os.path.exists(
                os.path.join(built_in, os.path.basename(path))):
            continue
        paths.add(path)
    return paths


def installed(prefix):
    found = set()
    for root, dirs, files in os.walk(prefix):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), prefix))
    return found


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: tree.py DOC PREFIX BUILD_TYPE BUILD_LIB_DIR")
    doc, prefix, build_type, build_lib_dir = sys.argv[1:5]
    want, have = promised(doc, build_type, build_lib_dir), installed(prefix)
    for path in sorted(have - want):
        print("installed but not in %s: %s" % (os.path.basename(doc), path))
    for path in sorted(want - have):
        print("in %s but not installed: %s" % (os.path.basename(doc), path))
    if want != have:
        sys.exit(1)
    print("install tree ok: %d files" % len(have))


main()
