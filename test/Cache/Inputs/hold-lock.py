"""Holds the flock of a disk cache lock file, as a process compiling that
key would (test/Cache/lock.test).

    hold-lock.py LOCKFILE READYFILE SECONDS

Creates READYFILE once it holds the lock, then sleeps; dying (or being
killed) releases the lock."""
import fcntl
import sys
import time

lock = open(sys.argv[1], "a")
fcntl.flock(lock, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(float(sys.argv[3]))
