#!/usr/bin/env python3
"""Private Redis servers, and servers that misbehave, for the fleet cache's
tests (test/Redis). Every server listens on 127.0.0.1 on a free port that it
writes to DIR/<name>.port, runs detached, and stops by itself after
--lifetime seconds, so that a failed test leaves nothing running for long.

    redis_fixture.py start DIR [--acl]   redis-server (DIR/redis.port); with
                                         --acl users reader (GET only) and
                                         writer, passwords readerpw, writerpw
    redis_fixture.py stall DIR           accepts and never answers
    redis_fixture.py garbage DIR         answers every request with junk
    redis_fixture.py reset DIR           forwards to DIR's redis-server, then
                                         resets the connection half way
                                         through the reply
    redis_fixture.py cli DIR ARGS...     redis-cli against DIR's server
    redis_fixture.py dump DIR KEY FILE   the exact bytes of KEY's value
    redis_fixture.py plant DIR KEY FILE  stores FILE's bytes under KEY
    redis_fixture.py stop DIR            stops everything started in DIR
    redis_fixture.py free-port           a port nobody listens on
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import time

LIFETIME = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def remember(directory, name, port, pid):
    with open(os.path.join(directory, name + ".port"), "w") as f:
        f.write("%d\n" % port)
    with open(os.path.join(directory, "pids"), "a") as f:
        f.write("%d\n" % pid)


def port_of(directory, name="redis"):
    with open(os.path.join(directory, name + ".port")) as f:
        return int(f.read())


def wait_listening(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("redis_fixture: nothing listens on port %d" % port)


def start(directory, acl):
    os.makedirs(directory, exist_ok=True)
    port = free_port()
    server = subprocess.Popen(
        ["timeout", str(LIFETIME), "redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", directory, "--daemonize", "no",
         "--logfile", os.path.join(directory, "redis.log")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    remember(directory, "redis", port, server.pid)
    wait_listening(port)
    for _ in range(100):
        if cli_output(directory, ["PING"]).strip() == "PONG":
            break
        time.sleep(0.05)
    if acl:
        cli_output(directory, ["ACL", "SETUSER", "reader", "on", ">readerpw", "~*", "+get",
                               "+ping", "+auth", "+select"])
        cli_output(directory, ["ACL", "SETUSER", "writer", "on", ">writerpw", "~*", "+@all"])


def cli_output(directory, args):
    return subprocess.run(["redis-cli", "-p", str(port_of(directory))] + args,
                          capture_output=True, text=True).stdout


def resp(directory, *parts):
    """One RESP command on a fresh connection; the reply's first line and,
    for a bulk string, its bytes (binary-safe, unlike redis-cli's output)."""
    request = b"*%d\r\n" % len(parts)
    for part in parts:
        request += b"$%d\r\n%s\r\n" % (len(part), part)
    with socket.create_connection(("127.0.0.1", port_of(directory))) as s:
        s.sendall(request)
        reply = b""
        while b"\r\n" not in reply:
            reply += s.recv(65536)
        head, _, rest = reply.partition(b"\r\n")
        if not head.startswith(b"$") or head == b"$-1":
            return head, None
        size = int(head[1:])
        while len(rest) < size + 2:
            rest += s.recv(65536)
        return head, rest[:size]


def serve(kind, directory):
    """Forks a detached server of `kind` and returns once it listens."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    pid = os.fork()
    if pid:
        listener.close()
        remember(directory, kind, port, pid)
        return
    os.setsid()
    signal.alarm(LIFETIME)
    held = []
    while True:
        connection, _ = listener.accept()
        if kind == "stall":
            held.append(connection)  # never answered, never closed
        elif kind == "garbage":
            connection.recv(65536)
            connection.sendall(b"this is not RESP\r\n")
            connection.close()
        elif kind == "reset":
            request = connection.recv(1 << 20)
            upstream = socket.create_connection(("127.0.0.1", port_of(directory)))
            upstream.sendall(request)
            time.sleep(0.2)
            reply = upstream.recv(1 << 22)
            upstream.close()
            connection.sendall(reply[: max(1, len(reply) // 2)])
            # SO_LINGER 0: close sends a reset, not a FIN.
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()


def stop(directory):
    try:
        with open(os.path.join(directory, "pids")) as f:
            pids = [int(line) for line in f if line.strip()]
    except FileNotFoundError:
        return
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    os.remove(os.path.join(directory, "pids"))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    command = argv[1]
    if command == "free-port":
        print(free_port())
        return
    directory = argv[2]
    if command == "start":
        start(directory, "--acl" in argv[3:])
    elif command in ("stall", "garbage", "reset"):
        os.makedirs(directory, exist_ok=True)
        serve(command, directory)
    elif command == "cli":
        sys.stdout.write(cli_output(directory, argv[3:]))
    elif command == "dump":
        head, value = resp(directory, b"GET", argv[3].encode())
        if value is None:
            sys.exit("redis_fixture: no value under %s (%s)" % (argv[3], head))
        with open(argv[4], "wb") as f:
            f.write(value)
    elif command == "plant":
        with open(argv[4], "rb") as f:
            head, _ = resp(directory, b"SET", argv[3].encode(), f.read())
        if head != b"+OK":
            sys.exit("redis_fixture: SET failed: %s" % head)
    elif command == "stop":
        stop(directory)
    else:
        sys.exit("redis_fixture: unknown command '%s'" % command)


if __name__ == "__main__":
    main(sys.argv)
