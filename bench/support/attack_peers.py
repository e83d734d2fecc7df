"""Attacks for bench/run attack that need more than the master's rendezvous port: idle
strangers holding connections to a node's peer-probe listeners, and an on-path relay between node 1
and the master that passes the handshake on honestly and then rewrites one frame. Bounded and
loopback only, like the rest of bench/run attack."""
import os
import select
import socket
import threading
import time

import reserved_ports


def listening_endpoints(pid, except_port):
    """The IPv4 (address, port) pairs the process listens on, but except_port (the rendezvous):
    on a node before its workers start, its peer-probe listeners."""
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for name in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, name))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    with open(f"/proc/{pid}/net/tcp") as f:
        next(f)
        for line in f:
            cells = line.split()
            local, state, inode = cells[1], cells[3], cells[9]
            if state != "0A" or inode not in inodes:
                continue
            address = socket.inet_ntoa(int(local[:8], 16).to_bytes(4, "little"))
            port = int(local[9:], 16)
            if port != except_port:
                out.append((address, port))
    return out


def probe_flood(endpoints, until, count=300):
    """`count` idle connections to the endpoints (round robin), each re-opened as soon as the
    listener closes it, until `until`. Sends nothing, ever."""
    def opened(i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(endpoints[i % len(endpoints)])
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return None
        return s

    socks = [opened(i) for i in range(count)]
    while time.monotonic() < until:
        for i, s in enumerate(socks):
            if s is None:
                socks[i] = opened(i)
                continue
            try:
                if s.recv(1) == b"":  # closed by the listener
                    raise OSError
            except BlockingIOError:
                continue
            except OSError:
                s.close()
                socks[i] = opened(i)
        time.sleep(0.02)
    for s in socks:
        if s is not None:
            s.close()


def _job_end_instead(frame):
    """The frame rewritten as the master's "job_end 0", its MAC line (when it has one) kept last."""
    lines = frame[4:].decode(errors="replace").split("\n")
    mac = [l for l in lines[4:] if l.startswith("mac=")]
    body = "\n".join(["msg", lines[1], lines[2], "job_end", "exit_code=0", *mac[-1:]]) + "\n"
    return len(body.encode()).to_bytes(4, "big") + body.encode()


class Relay(threading.Thread):
    """Listens on 127.0.0.1 at a free port and forwards one connection to the master both ways,
    whole frames at a time. Once `armed` is set, the next heartbeat (or its ack) from the master
    becomes "job_end 0"; `rewritten` says whether that happened. Bounded by `until`."""

    def __init__(self, master_port, until):
        super().__init__(daemon=True)
        self.master_port, self.until = master_port, until
        self.port = reserved_ports.free_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.armed, self.rewritten = threading.Event(), False

    def run(self):
        self.listener.settimeout(max(self.until - time.monotonic(), 0.1))
        try:
            node, _ = self.listener.accept()
        except OSError:
            return
        master = socket.create_connection(("127.0.0.1", self.master_port), timeout=5)
        pending = b""
        with node, master:
            while time.monotonic() < self.until:
                ready, _, _ = select.select([node, master], [], [], 0.05)
                if node in ready:
                    data = node.recv(65536)
                    if not data:
                        return
                    master.sendall(data)
                if master in ready:
                    data = master.recv(65536)
                    if not data:
                        return
                    pending += data
                    while len(pending) >= 4 and len(pending) >= 4 + int.from_bytes(pending[:4], "big"):
                        size = 4 + int.from_bytes(pending[:4], "big")
                        frame, pending = pending[:size], pending[size:]
                        kind = frame[4:].split(b"\n", 1)[0]
                        if self.armed.is_set() and not self.rewritten and kind in (b"hb", b"hb_ack"):
                            frame, self.rewritten = _job_end_instead(frame), True
                        try:
                            node.sendall(frame)
                        except OSError:
                            return
