"""The seed article's recipe, written out as it was meant: init_ddp() checks that MASTER_ADDR answers
(ICMP echo, as the article's `ping`) and passes a computed timeout, 30 s + 5 s per node (+10 s with a
dedicated NIC), to init_process_group, where PyTorch also applies it to every later collective.
The article's check is inverted as printed (it raises when the ping *succeeds*); this one raises
when the master does not answer. CAMPAIGN_TIME_SCALE scales the timeout like every duration of
bench/run crash-campaign (documented in BENCHMARKS.md)."""
import datetime
import os
import select
import socket
import struct
import time


def recipe_timeout_s(nodes, dedicated_nic, scale=1.0):
    return (30 + 5 * nodes + (10 if dedicated_nic else 0)) * scale


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(addr, timeout_s=2.0):
    """One ICMP echo to addr (IPv4, needs root for the raw socket); True when a reply came back."""
    try:
        ip = socket.gethostbyname(addr)
        with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
            ident = os.getpid() & 0xFFFF
            header = struct.pack("!BBHHH", 8, 0, 0, ident, 1)
            payload = b"seed-recipe"
            s.sendto(struct.pack("!BBHHH", 8, 0, _checksum(header + payload), ident, 1) + payload, (ip, 0))
            deadline = time.monotonic() + timeout_s
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([s], [], [], left)[0]:
                    return False
                packet, (src, _) = s.recvfrom(2048)
                icmp = packet[(packet[0] & 0x0F) * 4:]
                if src == ip and icmp[0] == 0 and struct.unpack("!H", icmp[4:6])[0] == ident:
                    return True
    except OSError:
        return False
    return False


def init_ddp(backend="gloo"):
    import torch.distributed as dist  # here: the campaign's harness imports this file without torch

    addr = os.environ["MASTER_ADDR"]
    if not ping(addr):
        raise RuntimeError(f"MASTER_ADDR {addr} is unreachable (no ICMP echo reply within 2 s)")
    nodes = int(os.environ["WORLD_SIZE"]) // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    dedicated = bool(os.environ.get("NCCL_SOCKET_IFNAME"))
    scale = float(os.environ.get("CAMPAIGN_TIME_SCALE", "1"))
    timeout = datetime.timedelta(seconds=recipe_timeout_s(nodes, dedicated, scale))
    dist.init_process_group(backend, timeout=timeout)
