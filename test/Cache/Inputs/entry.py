"""Damages the one entry of a kind in a kjit disk cache, as a crash, a bad
disk or a hostile hand would (test/Cache/corrupt.test).

    entry.py DIR KIND ACTION     KIND: artifact or manifest
    entry.py DIR KIND path       prints the entry's path

ACTION: truncate:N (keep N bytes; negative: drop -N), flip:OFFSET (one bit;
negative: from the end), zero, garbage, append, symlink (to a copy of the
entry outside the cache), dangling (a symlink to nothing), directory, fifo,
unreadable (mode 000), version (another format version, checksum kept),
huge (1 GiB of zeros, sparse)."""
import os
import random
import subprocess
import sys

directory, kind, action = sys.argv[1:4]
listing = subprocess.run(["kjit-cache", "--dir", directory, "list"],
                         capture_output=True, text=True, check=True).stdout
keys = [line.split()[0] for line in listing.splitlines() if line.split()[1] == kind]
if len(keys) != 1:
    sys.exit("expected one %s entry, found %d:\n%s" % (kind, len(keys), listing))
path = os.path.join(directory, "entries", keys[0][:2], keys[0])
if action == "path":
    print(path)
    sys.exit(0)
data = open(path, "rb").read()
os.unlink(path)
name, _, value = action.partition(":")
if name == "truncate":
    n = int(value)
    open(path, "wb").write(data[:n] if n >= 0 else data[:len(data) + n])
elif name == "flip":
    offset = int(value) % len(data)
    open(path, "wb").write(data[:offset] + bytes([data[offset] ^ 0x10]) + data[offset + 1:])
elif name == "zero":
    open(path, "wb").close()
elif name == "garbage":
    rng = random.Random(1)
    open(path, "wb").write(bytes(rng.randrange(256) for _ in range(len(data))))
elif name == "append":
    open(path, "wb").write(data + b"\0")
elif name == "version":
    open(path, "wb").write(data[:8] + bytes([2, 0, 0, 0]) + data[12:])
elif name in ("symlink", "dangling"):
    target = os.path.join(os.path.dirname(directory.rstrip("/")), "planted-" + keys[0])
    if name == "symlink":
        open(target, "wb").write(data)
    os.symlink(target, path)
elif name == "directory":
    os.mkdir(path)
elif name == "fifo":
    os.mkfifo(path)
elif name == "huge":
    with open(path, "wb") as out:
        out.truncate(1 << 30)
elif name == "unreadable":
    open(path, "wb").write(data)
    os.chmod(path, 0)
else:
    sys.exit("unknown action " + action)
