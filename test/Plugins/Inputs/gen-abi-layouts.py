#!/usr/bin/env python3
"""The plugin ABI's layout freeze, from one table (abi-layouts.txt).

  gen-abi-layouts.py check TABLE [-o FILE.c]
      Writes a C99 program of compile-time asserts with the table's numbers.
      Compiled against the current include/kjit-c/Plugin.h it fails when a
      released field moved, changed size or vanished, when a struct's size is
      not the one the table gives for its newest minor, or when the header's
      KJIT_ABI_MINOR is not that minor. Run, it prints what it checked.

  gen-abi-layouts.py verify TABLE HEADER
      The other direction: every struct and field of HEADER is in the table,
      in declaration order, with the minor its @since says (none: the
      struct's own, or 1.0), and the numbers measured on HEADER with the
      system C compiler are the table's. Prints what differs as table rows
      to add or fix, and exits 1 when anything does.

The table's format is described at its top. The check is for x86-64 Linux
(LP64), like the numbers.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


class TableError(Exception):
    pass


def minor_key(text):
    """'1.10' -> 10: every minor of the table is of major 1."""
    m = re.fullmatch(r"1\.(\d+)", text)
    if not m:
        raise TableError("'%s' is not a minor of ABI 1" % text)
    return int(m.group(1))


class Struct:
    def __init__(self, name, sizes, retired, line):
        self.name = name
        self.sizes = sizes  # [(minor, sizeof)], oldest first
        self.retired = retired
        self.line = line
        self.fields = []  # [(name, offset, size, minor)]

    @property
    def since(self):
        return self.sizes[0][0]

    def size_at(self, minor):
        size = None
        for m, n in self.sizes:
            if minor_key(m) <= minor_key(minor):
                size = n
        return size

    def fields_at(self, minor):
        return [f for f in self.fields if minor_key(f[3]) <= minor_key(minor)]


def read_table(path):
    minors, structs, current = None, [], None
    for number, raw in enumerate(open(path), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        where = "%s:%d" % (path, number)
        words = line.split()
        try:
            if words[0] == "minors":
                minors = words[1:]
                keys = [minor_key(m) for m in minors]
                if keys != sorted(set(keys)):
                    raise TableError("minors must increase")
            elif words[0] == "struct":
                if minors is None:
                    raise TableError("'minors' must come first")
                retired = words[-1] == "retired"
                if retired:
                    words = words[:-1]
                if len(words) < 4 or words[2] != "sizeof":
                    raise TableError("expected 'struct NAME sizeof M:N ...'")
                sizes = []
                for entry in words[3:]:
                    m, _, n = entry.partition(":")
                    if m not in minors:
                        raise TableError("%s is not in 'minors'" % m)
                    sizes.append((m, int(n)))
                current = Struct(words[1], sizes, retired, where)
                if any(s.name == current.name for s in structs):
                    raise TableError("struct %s twice" % current.name)
                structs.append(current)
            elif raw[0].isspace() and current and 3 <= len(words) <= 4:
                minor = words[3] if len(words) == 4 else current.since
                if minor not in minors:
                    raise TableError("%s is not in 'minors'" % minor)
                current.fields.append(
                    (words[0], int(words[1]), int(words[2]), minor))
            else:
                raise TableError("cannot read '%s'" % line.strip())
        except (TableError, ValueError) as e:
            raise TableError("%s: %s" % (where, e))
    if not minors:
        raise TableError("%s: no 'minors' line" % path)
    for s in structs:
        check_struct(s)
    return minors, structs


def check_struct(s):
    """The table's own consistency: sizes grow, fields append and fit."""
    def fail(what):
        raise TableError("%s: struct %s: %s" % (s.line, s.name, what))

    keys = [minor_key(m) for m, _ in s.sizes]
    if keys != sorted(set(keys)):
        fail("the minors of its sizes must increase")
    if [n for _, n in s.sizes] != sorted(n for _, n in s.sizes):
        fail("a struct never shrinks")
    end, last_minor, names = 0, s.since, set()
    for name, offset, size, minor in s.fields:
        if name in names:
            fail("field %s twice" % name)
        names.add(name)
        if minor_key(minor) < minor_key(s.since):
            fail("field %s is older than the struct" % name)
        if minor_key(minor) < minor_key(last_minor):
            fail("field %s (%s) follows one of %s: fields only append"
                 % (name, minor, last_minor))
        if offset < end:
            fail("field %s overlaps the one before it" % name)
        if offset + size > s.size_at(minor):
            fail("field %s ends past the struct's size in %s" % (name, minor))
        end, last_minor = offset + size, minor


#===------------------------------------------------------------------------===#
# check: the C file
#===------------------------------------------------------------------------===#

PRELUDE = """\
/*===- AbiLayouts.c - the plugin ABI's layout freeze ------------*- C -*-===*\\
|*                                                                            *|
|* GENERATED by test/Plugins/Inputs/gen-abi-layouts.py from abi-layouts.txt;  *|
|* edit the table, not this file. Built against kjit-c/Plugin.h: a released   *|
|* field that moved, changed size or vanished, or a struct whose size is not  *|
|* the table's, fails the build (x86-64 Linux).                               *|
|*                                                                            *|
\\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <stdio.h>

/* C99 has no _Static_assert: a negative array size fails the build, and the
 * typedef's name says what broke. */
#define KJIT_LAYOUT_CHECK(cond, tag) typedef char tag[(cond) ? 1 : -1]
#define KJIT_LAYOUT_FIELD(T, f, off, size)                                     \\
  KJIT_LAYOUT_CHECK(offsetof(T, f) == (off), T##_##f##_moved);                 \\
  KJIT_LAYOUT_CHECK(sizeof(((T *)0)->f) == (size), T##_##f##_resized)
/* The header is the table's newest minor, so its sizeof is that minor's:
 * a struct that grew needs the field's row (and a new minor), one that
 * shrank lost a released field. */
#define KJIT_LAYOUT_SIZE(T, size)                                              \\
  KJIT_LAYOUT_CHECK(sizeof(T) == (size), T##_size_is_not_the_tables)

KJIT_LAYOUT_CHECK(sizeof(void *) == 8 && sizeof(size_t) == 8, lp64_only);
"""


def generate_check(minors, structs):
    newest = minors[-1]
    out = [PRELUDE]
    out.append("/* A header of another minor needs the table to have it. */")
    out.append("KJIT_LAYOUT_CHECK(KJIT_ABI_MAJOR == 1 && KJIT_ABI_MINOR == %d,"
               % minor_key(newest))
    out.append("                  header_minor_is_not_the_tables_newest);")
    for s in structs:
        if s.retired:
            out.append("\n/* %s: retired (the table keeps its history). */"
                       % s.name)
            continue
        out.append("\n/* %s: since %s. */" % (s.name, s.since))
        out.append("KJIT_LAYOUT_SIZE(%s, %d);" % (s.name, s.size_at(newest)))
        for name, offset, size, _ in s.fields:
            out.append("KJIT_LAYOUT_FIELD(%s, %s, %d, %d);"
                       % (s.name, name, offset, size))
    out.append("\nint main(void) {")
    for m in minors:
        live = [s for s in structs
                if not s.retired and minor_key(s.since) <= minor_key(m)]
        retired = [s for s in structs
                   if s.retired and minor_key(s.since) <= minor_key(m)]
        fields = sum(len(s.fields_at(m)) for s in live)
        text = "layout of ABI %s holds: %d structs, %d fields" % (
            m, len(live), fields)
        if retired:
            text += " (%d retired struct%s not checked)" % (
                len(retired), "" if len(retired) == 1 else "s")
        out.append('  puts("%s");' % text)
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


#===------------------------------------------------------------------------===#
# verify: the header against the table
#===------------------------------------------------------------------------===#

TOKEN = re.compile(r"/\*.*?\*/|;|\{|\}|[^/;{}]+|/", re.S)


def since_of(comments):
    found = [re.search(r"@since (1\.\d+)", c) for c in comments]
    found = [m.group(1) for m in found if m]
    return found[-1] if found else None


def header_structs(text):
    """[(name, since or None, [(field, since or None)])] in header order."""
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    result = []
    for m in re.finditer(
            r"(/\*\*(?:(?!\*/).)*\*/\s*)?(?:typedef\s+)?struct\s+(\w+)\s*\{",
            text, re.S):
        name = m.group(2)
        doc = [m.group(1)] if m.group(1) else []
        depth, pos, fields = 1, m.end(), []
        comments, decl, last = [], "", None
        while depth:
            tok = TOKEN.match(text, pos)
            pos = tok.end()
            t = tok.group(0)
            if t.startswith("/*"):
                if t.startswith("/**<") and not decl.strip() and last:
                    # A trailing comment documents the field before it.
                    field, since, _ = fields[-1]
                    fields[-1] = (field, since_of([t]) or since, True)
                else:
                    comments.append(t)
            elif t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
            elif t == ";":
                decl = " ".join(decl.split())
                fp = re.search(r"\(\*\s*(\w+)\)", decl)
                field = fp.group(1) if fp else re.findall(
                    r"\w+", re.sub(r"\[[^\]]*\]", "", decl))[-1]
                fields.append((field, since_of(comments), bool(comments)))
                comments, decl, last = [], "", field
            else:
                decl += t
        # A field without any comment belongs to the one before it
        # (`size_t num_args; const kjit_arg *const *args;`).
        for i, (field, since, commented) in enumerate(fields):
            if i and not commented and since is None:
                since = fields[i - 1][1]
            fields[i] = (field, since, commented)
        result.append((name, since_of(doc), [f[:2] for f in fields]))
    return result


def measure(header, structs):
    """{struct: (sizeof, {field: (offset, size)})} measured with cc."""
    lines = ["#include <stdio.h>", "#include <stddef.h>",
             '#include "%s"' % os.path.abspath(header), "int main(void) {"]
    for name, _, fields in structs:
        lines.append('printf("S %s %%zu\\n", sizeof(struct %s));'
                     % (name, name))
        for f, _ in fields:
            lines.append('printf("F %s %s %%zu %%zu\\n", offsetof(struct %s, '
                         '%s), sizeof(((struct %s *)0)->%s));'
                         % (name, f, name, f, name, f))
    lines.append("return 0; }")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "measure.c"), os.path.join(tmp, "measure")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.check_call([os.environ.get("CC", "cc"), "-std=c99", "-o",
                               exe, src])
        output = subprocess.check_output([exe], text=True)
    result = {}
    for line in output.splitlines():
        words = line.split()
        if words[0] == "S":
            result[words[1]] = (int(words[2]), {})
        else:
            result[words[1]][1][words[2]] = (int(words[3]), int(words[4]))
    return result


def header_minor(text):
    m = re.search(r"#define KJIT_ABI_MINOR (\d+)", text)
    return "1.%s" % m.group(1) if m else None


def verify(minors, structs, header):
    text = open(header).read()
    found = header_structs(text)
    numbers = measure(header, found)
    newest = minors[-1]
    problems = []
    if header_minor(text) != newest:
        problems.append("the header is ABI %s, the table's newest minor %s: "
                        "add the minor to 'minors' (and its rows)"
                        % (header_minor(text), newest))
    table = {s.name: s for s in structs}
    for name, struct_since, fields in found:
        size, measured = numbers[name]
        since = struct_since or "1.0"
        s = table.get(name)
        if s is None:
            problems.append("struct %s is not in the table; its rows:\n"
                            "  struct %s  sizeof %s:%d" % (name, name, since,
                                                           size))
            for f, _ in fields:
                problems.append("    %s %d %d" % ((f,) + measured[f]))
            continue
        if s.retired:
            problems.append("struct %s is retired in the table but still in "
                            "the header" % name)
            continue
        if s.since != since:
            problems.append("struct %s: the header says @since %s, the table "
                            "%s" % (name, since, s.since))
        if s.size_at(newest) != size:
            problems.append("struct %s: sizeof is %d, the table says %d for "
                            "%s" % (name, size, s.size_at(newest), newest))
        rows = {f[0]: f for f in s.fields}
        for i, (f, field_since) in enumerate(fields):
            field_since = field_since or since
            offset, fsize = measured[f]
            row = rows.get(f)
            want = "  %s %d %d%s" % (f, offset, fsize, "" if field_since ==
                                     since else "  " + field_since)
            if row is None:
                problems.append("struct %s: field %s is not in the table; "
                                "its row:\n  %s" % (name, f, want))
            elif row[1:3] != (offset, fsize) or row[3] != field_since:
                problems.append(
                    "struct %s: field %s is %d %d (since %s) in the header, "
                    "%d %d (since %s) in the table" %
                    (name, f, offset, fsize, field_since, row[1], row[2],
                     row[3]))
            elif [x[0] for x in s.fields].index(f) != i:
                problems.append("struct %s: field %s is not where the table "
                                "has it" % (name, f))
        for f in rows:
            if f not in dict(fields):
                problems.append("struct %s: the table's field %s is not in "
                                "the header (a retired field keeps its slot "
                                "and its row, renamed reserved_* in both)"
                                % (name, f))
    names = {name for name, _, _ in found}
    for s in structs:
        if not s.retired and s.name not in names:
            problems.append("struct %s is in the table but not in the header "
                            "(mark it retired)" % s.name)
    for p in problems:
        print("%s: %s" % (header, p))
    if not problems:
        print("%s matches the table: %d structs, ABI %s" %
              (header, len(found), newest))
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="write the C check")
    check.add_argument("table")
    check.add_argument("-o", dest="output")
    ver = sub.add_parser("verify", help="compare a header with the table")
    ver.add_argument("table")
    ver.add_argument("header")
    args = parser.parse_args()
    try:
        minors, structs = read_table(args.table)
    except TableError as e:
        print("gen-abi-layouts.py: %s" % e, file=sys.stderr)
        return 1
    if args.command == "verify":
        return verify(minors, structs, args.header)
    text = generate_check(minors, structs)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
