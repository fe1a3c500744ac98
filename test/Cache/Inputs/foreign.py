"""Plants files that kjit did not make in a directory, and lists them, to
show that the disk cache leaves them alone (test/Cache/foreign-*.test).

    foreign.py plant DIR    makes them, two days old (older than any stale age)
    foreign.py list DIR     one line per planted path: its type, size, mode,
                            modification time (ns) and a digest of its bytes,
                            or "missing"
    foreign.py tree DIR     the same for everything under DIR, DIR included

Many names are close to kjit's (entries/<2 hex>/<64 hex key>, locks/<key>,
.tmp.<pid>.<hex>): a shard-like directory with other files, a key one digit
short or long, in capitals, with a suffix, or in the wrong shard, temporary
names that do not follow kjit's pattern, or that do but where kjit puts no
temporary files, and files named like kjit's own beside them."""
import hashlib
import os
import sys

HEX = "0123456789abcdef"
SHARDS = [a + b for a in HEX for b in HEX]


def planted():
    """(relative path, is a directory) in creation order; a directory's
    files come before it, so that its time is set after they are made."""
    paths = [
        ("Documents/thesis.txt", False), ("Documents", True),
        (".bashrc", False), ("stats.bak", False), ("cleanup.lock.old", False),
        ("CACHEDIR.TAG.orig", False), (".tmp.my-editor-swap", False),
        (".tmp.4242.beef", False), ("entries.old/notes.txt", False),
        ("entries.old", True),
        ("entries/README", False), ("entries/.tmp.4242.beef", False),
        ("locks/README", False), ("locks/.tmp.4242.beef", False),
        ("locks/" + "a" * 63, False), ("locks/" + "a" * 64 + ".lock", False),
        ("locks/" + "A" * 64, False), ("locks/notes/todo.txt", False),
        ("locks/notes", True),
    ]
    for name in ("zz", "my-notes", "abc", "AB", "a"):
        paths += [("entries/%s/notes.txt" % name, False), ("entries/" + name, True)]
    for shard in SHARDS:
        other = HEX[(HEX.index(shard[0]) + 1) % 16] + shard[1]
        key = shard + "0123456789abcdef" * 3 + "0123456789abcd"
        for name in ("notes.txt", ".tmp.my-swap", ".tmp.4242.xyz", ".tmp.4242.BEEF",
                     ".tmp..beef", ".tmp.4242.beef.swp", ".tmp.4242.", key[:63],
                     key + "0", key.upper(), other + key[2:], key + ".bak",
                     "notes/todo.txt"):
            paths.append(("entries/%s/%s" % (shard, name), False))
        paths.append(("entries/%s/notes" % shard, True))
    return paths


def plant(root):
    old = 1_000_000_000 * (int(os.path.getmtime(root)) - 2 * 86400)
    for path, directory in planted():
        full = os.path.join(root, path)
        if not directory:
            os.makedirs(os.path.dirname(full), mode=0o700, exist_ok=True)
            with open(full, "w") as out:
                out.write("not kjit's: %s\n" % path)
        os.utime(full, ns=(old, old))


def describe(root, path):
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return "%s missing" % path
    if os.path.isdir(full) and not os.path.islink(full):
        return "%s dir %o %d" % (path, st.st_mode, st.st_mtime_ns)
    with open(full, "rb") as data:
        digest = hashlib.sha256(data.read()).hexdigest()[:16]
    return "%s file %d %o %d %s" % (path, st.st_size, st.st_mode, st.st_mtime_ns, digest)


def main():
    command, root = sys.argv[1:3]
    if command == "plant":
        plant(root)
    elif command == "list":
        for path, _ in planted():
            print(describe(root, path))
    elif command == "tree":
        print(describe(root, "."))
        for parent, dirs, files in sorted(os.walk(root)):
            for name in sorted(dirs + files):
                print(describe(root, os.path.relpath(os.path.join(parent, name), root)))
    else:
        sys.exit("unknown command " + command)


main()
