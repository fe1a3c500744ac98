#!/usr/bin/env python3
"""Private Redis servers, and servers that misbehave, for the fleet cache's
tests (test/Redis). Every server listens on 127.0.0.1 on a free port that it
writes to DIR/<name>.port, runs detached, and stops by itself after
--lifetime seconds, so that a failed test leaves nothing running for long.

    redis_fixture.py start DIR [--acl] [--requirepass PW]
                                         redis-server (DIR/redis.port); with
                                         --acl users reader (GET only) and
                                         writer, passwords readerpw, writerpw;
                                         with --requirepass the default
                                         user's password is PW
    redis_fixture.py stall DIR           accepts and never answers
    redis_fixture.py garbage DIR         answers every request with junk
    redis_fixture.py blackhole DIR       never accepts, and its accept queue
                                         is full: a connect is never answered
    redis_fixture.py reset DIR           forwards one request to DIR's
                                         redis-server, then sends half of its
                                         reply and resets the connection
    redis_fixture.py holdset DIR         forwards every request to DIR's
                                         redis-server except SET: it logs
                                         "SET held" to DIR/holdset.log and
                                         answers nothing until DIR/release
                                         exists; then it logs "SET released"
                                         and closes that connection
    redis_fixture.py record DIR          forwards everything to DIR's
                                         redis-server and logs each request to
                                         DIR/record.log, SET's value (and any
                                         argument over 200 bytes) as
                                         "<N bytes>"
    redis_fixture.py die DIR             forwards the first request to DIR's
                                         redis-server and answers it, then
                                         exits as a killed server would (its
                                         connections close, its port refuses)
    redis_fixture.py hugebulk DIR        answers GET with the header of a 4 GiB
                                         bulk string, then 256 MiB of zeros as
                                         fast as they are read, then nothing
                                         (the connection held open)
    redis_fixture.py hugearray DIR       answers GET with the header of an
                                         array of 2^31-1 elements, then
                                         nothing (the connection held open)
    redis_fixture.py dripget DIR         answers GET with a 2 KiB value, one
                                         byte every 50 ms (about 100 s)
    redis_fixture.py dripset DIR         answers GET with a miss, and SET with
                                         a status line that never ends, one
                                         byte every 50 ms
    redis_fixture.py cli DIR ARGS...     redis-cli against DIR's server (as
                                         the default user: REDISCLI_AUTH for a
                                         --requirepass server)
    redis_fixture.py dump DIR KEY FILE   the exact bytes of KEY's value
    redis_fixture.py plant DIR KEY FILE  stores FILE's bytes under KEY
    redis_fixture.py await FILE [TEXT]   waits until FILE exists (and holds
                                         TEXT); fails after 120 s: a guard
                                         against a hang, not a measurement
    redis_fixture.py within SECONDS [--max-rss MIB] COMMAND...
                                         runs COMMAND and exits with its
                                         status; fails when it runs past
                                         SECONDS (it is killed then) or, with
                                         --max-rss, when its resident memory
                                         passed MIB at its peak
    redis_fixture.py stop DIR            stops everything started in DIR
    redis_fixture.py free-port           a port nobody listens on
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

LIFETIME = 300
# The servers that answer by themselves (answer()).
ANSWERING = ("hugebulk", "hugearray", "dripget", "dripset")


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


def start(directory, acl, password):
    os.makedirs(directory, exist_ok=True)
    port = free_port()
    server = subprocess.Popen(
        ["timeout", str(LIFETIME), "redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", directory, "--daemonize", "no",
         "--logfile", os.path.join(directory, "redis.log")]
        + (["--requirepass", password] if password else []),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    remember(directory, "redis", port, server.pid)
    if password:
        with open(os.path.join(directory, "redis.password"), "w") as f:
            f.write(password)
    wait_listening(port)
    for _ in range(100):
        if cli_output(directory, ["PING"]).strip() == "PONG":
            break
        time.sleep(0.05)
    if acl:
        cli_output(directory, ["ACL", "SETUSER", "reader", "on", ">readerpw", "~*", "+get",
                               "+ping", "+auth", "+select"])
        cli_output(directory, ["ACL", "SETUSER", "writer", "on", ">writerpw", "~*", "+@all"])


def password_of(directory):
    try:
        with open(os.path.join(directory, "redis.password")) as f:
            return f.read()
    except FileNotFoundError:
        return None


def cli_output(directory, args):
    env = dict(os.environ)
    if password_of(directory):
        env["REDISCLI_AUTH"] = password_of(directory)
    return subprocess.run(["redis-cli", "-p", str(port_of(directory))] + args,
                          capture_output=True, text=True, env=env).stdout


def resp(directory, *parts):
    """One RESP command on a fresh connection (after AUTH on a --requirepass
    server): its raw reply (binary-safe, unlike redis-cli's output)."""
    password = password_of(directory)
    with socket.create_connection(("127.0.0.1", port_of(directory))) as s:
        reader = s.makefile("rb")
        if password:
            s.sendall(encode([b"AUTH", password.encode()]))
            auth = read_reply(reader)
            if not auth.startswith(b"+OK"):
                sys.exit("redis_fixture: AUTH failed: %r" % auth)
        s.sendall(encode(parts))
        return read_reply(reader)


def encode(parts):
    request = b"*%d\r\n" % len(parts)
    for part in parts:
        request += b"$%d\r\n%s\r\n" % (len(part), part)
    return request


def read_line(reader):
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise EOFError
    return line


def read_exactly(reader, size):
    data = reader.read(size)
    if len(data) != size:
        raise EOFError
    return data


def read_reply(reader):
    """The raw bytes of one complete RESP reply (nested ones included)."""
    line = read_line(reader)
    if line[:1] == b"$" and int(line[1:]) >= 0:
        return line + read_exactly(reader, int(line[1:]) + 2)
    if line[:1] == b"*" and int(line[1:]) > 0:
        return line + b"".join(read_reply(reader) for _ in range(int(line[1:])))
    return line


def parse_bulk(reply):
    head, _, rest = reply.partition(b"\r\n")
    if not head.startswith(b"$") or head == b"$-1":
        return head, None
    return head, rest[: int(head[1:])]


def read_request(reader):
    """One request as hiredis sends it (an array of bulk strings): its
    arguments and its raw bytes."""
    line = read_line(reader)
    if line[:1] != b"*":
        raise EOFError
    raw, parts = line, []
    for _ in range(int(line[1:])):
        head = read_line(reader)
        part = read_exactly(reader, int(head[1:]) + 2)
        raw += head + part
        parts.append(part[:-2])
    return parts, raw


def log(directory, kind, line):
    with open(os.path.join(directory, kind + ".log"), "a") as f:
        f.write(line + "\n")


def describe(parts):
    """A request as text: SET's value, and any argument over 200 bytes, as
    its size."""
    return " ".join("<%d bytes>" % len(p) if len(p) > 200 or (i == 2 and parts[0].upper() == b"SET")
                    else p.decode(errors="replace") for i, p in enumerate(parts))


def proxy(kind, directory, connection, first):
    """One client connection of a forwarding server of `kind`."""
    reader = connection.makefile("rb")
    upstream = socket.create_connection(("127.0.0.1", port_of(directory)))
    upstream_reader = upstream.makefile("rb")
    try:
        while True:
            parts, raw = read_request(reader)
            if kind == "holdset" and parts[0].upper() == b"SET":
                log(directory, kind, "SET held")
                release = os.path.join(directory, "release")
                while not os.path.exists(release):
                    time.sleep(0.02)
                log(directory, kind, "SET released")
                return
            if kind == "record":
                log(directory, kind, describe(parts))
            upstream.sendall(raw)
            reply = read_reply(upstream_reader)
            if kind == "reset":
                connection.sendall(reply[: max(1, len(reply) // 2)])
                # SO_LINGER 0: close sends a reset, not a FIN.
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                      struct.pack("ii", 1, 0))
                return
            connection.sendall(reply)
            if kind == "die" and first:
                # As a killed process: the kernel closes every socket.
                os._exit(0)
    except (EOFError, OSError):
        pass
    finally:
        upstream.close()
        connection.close()


def drip(connection, data):
    for i in range(len(data)):
        connection.sendall(data[i:i + 1])
        time.sleep(0.05)


def hold(connection):
    """Sends nothing more; returns when the client closes."""
    while connection.recv(65536):
        pass


def answer(kind, connection):
    """One client connection of a server of `kind` that answers by itself
    (no redis-server behind it): a miss for GET, unless `kind` says
    otherwise."""
    reader = connection.makefile("rb")
    try:
        while True:
            parts, _ = read_request(reader)
            command = parts[0].upper()
            if kind == "hugebulk" and command == b"GET":
                connection.sendall(b"$4294967296\r\n")
                zeros = bytes(65536)
                for _ in range(4096):
                    connection.sendall(zeros)
                hold(connection)
                return
            if kind == "hugearray" and command == b"GET":
                connection.sendall(b"*2147483647\r\n")
                hold(connection)
                return
            if kind == "dripget" and command == b"GET":
                drip(connection, b"$2048\r\n" + b"v" * 2048 + b"\r\n")
            elif kind == "dripset" and command == b"SET":
                drip(connection, b"+" + b"A" * LIFETIME * 20)
            elif command == b"GET":
                connection.sendall(b"$-1\r\n")
            else:
                connection.sendall(b"-ERR not served here\r\n")
    except (EOFError, OSError):
        pass
    finally:
        connection.close()


def fill_accept_queue(listener, port):
    """Connections nobody accepts, until the listener's accept queue is full
    and a connect is no longer answered."""
    held = []
    for _ in range(16):
        filler = socket.socket()
        filler.settimeout(0.5)
        try:
            filler.connect(("127.0.0.1", port))
        except OSError:
            filler.close()
            return held
        held.append(filler)
    sys.exit("redis_fixture: the accept queue of port %d does not fill" % port)


def serve(kind, directory):
    """Forks a detached server of `kind` and returns once it listens."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(0 if kind == "blackhole" else 64)
    port = listener.getsockname()[1]
    held = fill_accept_queue(listener, port) if kind == "blackhole" else []
    pid = os.fork()
    if pid:
        listener.close()
        for filler in held:
            filler.close()
        remember(directory, kind, port, pid)
        return
    os.setsid()
    # Detached: lit's pipes must not wait for this process when a test
    # fails before its stop.
    null = os.open(os.devnull, os.O_RDWR)
    errors = os.open(os.path.join(directory, kind + ".err"),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(errors, 2)
    signal.alarm(LIFETIME)
    if kind == "blackhole":
        signal.pause()  # holds the listener and the fillers until the alarm
    first = True
    while True:
        connection, _ = listener.accept()
        if kind == "stall":
            held.append(connection)  # never answered, never closed
        elif kind == "garbage":
            connection.recv(65536)
            connection.sendall(b"this is not RESP\r\n")
            connection.close()
        elif kind in ANSWERING:
            threading.Thread(target=answer, args=(kind, connection), daemon=True).start()
        else:
            threading.Thread(target=proxy, args=(kind, directory, connection, first),
                             daemon=True).start()
        first = False


def await_file(path, text):
    for _ in range(6000):
        if os.path.exists(path):
            if text is None:
                return
            with open(path) as f:
                if text in f.read():
                    return
        time.sleep(0.02)
    sys.exit("redis_fixture: after 120 s, %s %s" % (
        path, "does not exist" if not os.path.exists(path) else "does not hold '%s'" % text))


def within(argv):
    seconds, argv = float(argv[0]), argv[1:]
    max_rss = None
    if argv[:1] == ["--max-rss"]:
        max_rss, argv = int(argv[1]), argv[2:]
    child = subprocess.Popen(argv, start_new_session=True)
    deadline = time.monotonic() + seconds
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.killpg(child.pid, signal.SIGKILL)
            os.wait4(child.pid, 0)
            sys.exit("redis_fixture: %s ran past %g s (killed)" % (argv[0], seconds))
        time.sleep(0.02)
    peak = usage.ru_maxrss // 1024
    if max_rss is not None and peak > max_rss:
        sys.exit("redis_fixture: %s used %d MiB at its peak, more than %d" % (argv[0], peak, max_rss))
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)


def stop(directory):
    try:
        with open(os.path.join(directory, "pids")) as f:
            pids = [int(line) for line in f if line.strip()]
    except FileNotFoundError:
        return
    for pid in pids:
        # Only what this file started: a pid of a stale list may have been
        # reused by an unrelated process since.
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"redis" not in f.read():
                    continue
        except OSError:
            continue
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
    if command == "await":
        await_file(argv[2], argv[3] if len(argv) > 3 else None)
        return
    if command == "within":
        within(argv[2:])
        return
    directory = argv[2]
    if command == "start":
        password = None
        if "--requirepass" in argv[3:]:
            password = argv[argv.index("--requirepass") + 1]
        start(directory, "--acl" in argv[3:], password)
    elif command in ("stall", "garbage", "blackhole", "reset", "holdset", "record", "die") + ANSWERING:
        os.makedirs(directory, exist_ok=True)
        serve(command, directory)
    elif command == "cli":
        sys.stdout.write(cli_output(directory, argv[3:]))
    elif command == "dump":
        head, value = parse_bulk(resp(directory, b"GET", argv[3].encode()))
        if value is None:
            sys.exit("redis_fixture: no value under %s (%s)" % (argv[3], head))
        with open(argv[4], "wb") as f:
            f.write(value)
    elif command == "plant":
        with open(argv[4], "rb") as f:
            head, _ = parse_bulk(resp(directory, b"SET", argv[3].encode(), f.read()))
        if head != b"+OK":
            sys.exit("redis_fixture: SET failed: %s" % head)
    elif command == "stop":
        stop(directory)
    else:
        sys.exit("redis_fixture: unknown command '%s'" % command)


if __name__ == "__main__":
    main(sys.argv)
