"""free_port(): a TCP port for one benchmark or test process alone, the way the C++ test support
does it (tests/integration/support/process_runner.cpp, free_tcp_port): from 20000-28999, below
the kernel's ephemeral range (no bind(0) or connect of another process gets it), reserved by an
flock on /tmp/ddplaunch-test-ports/PORT held until this process exits (parallel ctest runs never
share one), and bindable on every address when handed out."""
import fcntl
import os
import random
import socket

FIRST, COUNT = 20000, 9000
LOCK_DIR = "/tmp/ddplaunch-test-ports"
_held = []  # open lock files: the reservations live as long as this process
_rng = random.Random(os.getpid() ^ int.from_bytes(os.urandom(4), "little"))


def _unused(port):
    """Nobody listens on, or keeps connections (TIME_WAIT too) on, port (IPv4 and IPv6)."""
    families = [(socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6:
        families.append((socket.AF_INET6, "::"))
    for family, any_addr in families:
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 here
        with s:
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s.bind((any_addr, port))
            except OSError:
                return False
    return True


def free_port():
    os.makedirs(LOCK_DIR, mode=0o1777, exist_ok=True)
    start = _rng.randrange(COUNT)
    for i in range(500):  # bounded
        port = FIRST + (start + i) % COUNT
        fd = os.open(os.path.join(LOCK_DIR, str(port)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # another process holds it
            continue
        if not _unused(port):
            os.close(fd)
            continue
        _held.append(fd)
        return port
    raise RuntimeError(f"no free TCP port in {FIRST}-{FIRST + COUNT - 1} (locks in {LOCK_DIR})")
