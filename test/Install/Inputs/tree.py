"""Compares an install tree with the list docs/Install.md promises.

Usage: tree.py DOC PREFIX BUILD_TYPE

The list is the fenced block between the markers
<!-- begin install-tree --> and <!-- end install-tree --> of DOC: one path
per line, relative to the prefix. `<config>` in a path stands for the build
type in lower case (kjitTargets-release.cmake). Prints what differs and
exits 1, or prints "install tree ok: N files" and exits 0.
"""
import os
import sys


def promised(doc, build_type):
    text = open(doc).read()
    begin = text.find("<!-- begin install-tree")
    end = text.find("<!-- end install-tree -->")
    if begin < 0 or end < begin:
        sys.exit("tree.py: %s has no install-tree block" % doc)
    lines = text[begin:end].splitlines()[1:]
    paths = [l.strip() for l in lines if l.strip() and not l.startswith("```")]
    return {p.replace("<config>", build_type.lower()) for p in paths}


def installed(prefix):
    found = set()
    for root, dirs, files in os.walk(prefix):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), prefix))
    return found


def main():
    doc, prefix, build_type = sys.argv[1:4]
    want, have = promised(doc, build_type), installed(prefix)
    for path in sorted(have - want):
        print("installed but not in %s: %s" % (os.path.basename(doc), path))
    for path in sorted(want - have):
        print("in %s but not installed: %s" % (os.path.basename(doc), path))
    if want != have:
        sys.exit(1)
    print("install tree ok: %d files" % len(have))


main()
