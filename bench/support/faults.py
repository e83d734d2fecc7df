"""The faults of bench/run fault-matrix: for each fault and launcher, a Plan saying which launchers to
start (on loopback or on a netns host of tests/clusters/test-cluster), what to set up before, and what to
inject once the workers run. A row that does not apply returns a reason string instead of a Plan."""
import os
import random
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import paths
import reserved_ports

TEST_CLUSTER = paths.TEST_CLUSTER
FAIL_ONCE = os.path.join(paths.SUPPORT, "fail_once.sh")
H1, H2 = "198.18.0.11", "198.18.0.12"


@dataclass
class Plan:
    nodes: list                      # [(argv, host index or None for loopback)]
    env: dict = field(default_factory=dict)
    setup: Optional[Callable] = None         # (ctx) before any launcher starts
    after_first: Optional[Callable] = None   # (ctx) after node 0 started, before the others
    inject: Optional[Callable] = None        # (ctx, job) once `workers` worker processes run
    workers: int = 0
    worker_comm: str = "fake_worker"


class Context:
    """Per-row resources: ports, the netns cluster name, sockets to close, a torchrun log dir."""

    def __init__(self, cluster, logdir):
        self.cluster, self.logdir = cluster, logdir
        self.port = free_port()
        self.port2 = free_port()
        self.held = []

    def release(self):
        for s in self.held:
            s.close()
        self.held = []
        if self.cluster:
            subprocess.run([TEST_CLUSTER, "unblock", self.cluster, "1"], capture_output=True)
            subprocess.run([TEST_CLUSTER, "link", self.cluster, "2", "up"], capture_output=True)


def free_port():
    """A port no other test or benchmark process is handed (see reserved_ports.py)."""
    return reserved_ports.free_port()


def wait_listening(host, port, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def send_garbage(host, port):
    """Random bytes, an HTTP request, a huge length prefix, and a half-open connection; then closes them."""
    payloads = [random.Random(7).randbytes(65536), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                b"\xff\xff\xff\xff" + b"A" * 100, b""]
    for p in payloads:
        try:
            with socket.create_connection((host, port), timeout=2) as s:
                s.sendall(p)
                time.sleep(0.05)
        except OSError:
            pass


def ddp(ctx, node_rank, master, *prog, extra=()):
    return [paths.ddplaunch(), "--nodes", "2", "--nproc-per-node", "2", "--master", master,
            "--node-rank", str(node_rank), *extra, "--", *prog]


def tr_static(ctx, node_rank, addr, port, *prog):
    return [paths.TORCHRUN, "--nnodes", "2", "--nproc_per_node", "2", "--node_rank", str(node_rank),
            "--master_addr", addr, "--master_port", str(port), "--max_restarts", "3", "--no_python",
            "-r", "1", "-t", "1", "--log_dir", f"{ctx.logdir}/t{node_rank}", *prog]


def tr_c10d(ctx, node_rank, addr, *prog):
    return [paths.TORCHRUN, "--nnodes", "2", "--nproc_per_node", "2", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", f"{addr}:{ctx.port}", "--rdzv_id", "faultmatrix", "--max_restarts", "3",
            "--no_python", "-r", "1", "-t", "1", "--log_dir", f"{ctx.logdir}/t{node_rank}", *prog]


def two(make, hosts=(None, None)):
    return [(make(0), hosts[0]), (make(1), hosts[1])]


def worker_port_in_use(launcher, ctx):
    def hold(c):
        s = socket.socket()
        s.bind(("127.0.0.1", c.port2))
        s.listen()
        c.held.append(s)
    fw = paths.fake_worker()
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", fw, "--report-init",
                                  extra=("--worker-port", str(ctx.port2))))
    else:
        nodes = two(lambda r: tr_static(ctx, r, "127.0.0.1", ctx.port2, fw))
    return Plan(nodes, setup=hold)


def master_port_blackholed(launcher, ctx):
    if not ctx.cluster:
        return "needs root (netns + nftables)"
    fw = paths.fake_worker()
    block = lambda c: subprocess.run([TEST_CLUSTER, "block", c.cluster, "1", str(c.port)], check=True)
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"{H1}:{ctx.port}", fw, "--report-init"), (1, 2))
    else:
        nodes = two(lambda r: tr_static(ctx, r, H1, ctx.port, fw), (1, 2))
    return Plan(nodes, setup=block)


def master_unresolvable(launcher, ctx):
    fw = paths.fake_worker()
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"no-such-host.invalid:{ctx.port}", fw, "--report-init"))
    else:
        nodes = two(lambda r: tr_static(ctx, r, "no-such-host.invalid", ctx.port, fw))
    return Plan(nodes)


def master_loopback_multinode(launcher, ctx):
    if not ctx.cluster:
        return "needs root (netns hosts)"
    fw = paths.fake_worker()
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", fw, "--report-init"), (1, 2))
    else:
        nodes = two(lambda r: tr_static(ctx, r, "127.0.0.1", ctx.port, fw), (1, 2))
    return Plan(nodes)


def bogus_nccl_ifname(launcher, ctx):
    fw = paths.fake_worker()
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", fw, "--report-init"))
    else:
        nodes = two(lambda r: tr_static(ctx, r, "127.0.0.1", ctx.port, fw))
    return Plan(nodes, env={"NCCL_SOCKET_IFNAME": "bogus0"})


def rank_fails_init_once(launcher, ctx):
    env = {"BENCH_STAMP_DIR": ctx.logdir, "BENCH_FAIL_RANK": "1"}
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", FAIL_ONCE))
    else:
        nodes = two(lambda r: tr_c10d(ctx, r, "127.0.0.1", FAIL_ONCE))
    return Plan(nodes, env=env)


HANG_DEADLINE = ("--set", "timeout.base_s=3", "--set", "timeout.min_s=3", "--set", "timeout.per_node_s=0")


def rank_hangs_in_init(launcher, ctx):
    """Rank 1 enters init (reported through the shim, as init_process_group does) and hangs there in
    generation 0. A rank that hangs before reporting init is in setup, which the launcher never bounds
    on its own (DESIGN.md, "Phases"): a silent program that hangs is not an init hang."""
    fw = paths.fake_worker()
    hang = (fw, "--report-init", "--hang-init-on-gen", "0", "--fail-rank", "1")
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", *hang, extra=HANG_DEADLINE))
    else:
        nodes = two(lambda r: tr_c10d(ctx, r, "127.0.0.1", *hang))
    return Plan(nodes)


def _running_job(launcher, ctx, inject, hosts=(None, None), worker_args=("--hang",)):
    fw = paths.fake_worker()
    addr = H1 if hosts[0] else "127.0.0.1"
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"{addr}:{ctx.port}", fw, "--report-init", *worker_args), hosts)
    elif hosts[0]:
        # torch 1.13's c10d rendezvous hosts its store only when the endpoint matches this machine's
        # hostname, which a netns address does not: both nodes would wait on a store nobody hosts.
        nodes = two(lambda r: tr_static(ctx, r, addr, ctx.port, fw, *worker_args), hosts)
    else:
        nodes = two(lambda r: tr_c10d(ctx, r, addr, fw, *worker_args), hosts)
    return Plan(nodes, inject=inject, workers=4)


def node_launcher_sigkilled(launcher, ctx):
    return _running_job(launcher, ctx, lambda c, job: job.procs[1].kill())


def link_cut(launcher, ctx):
    if not ctx.cluster:
        return "needs root (netns hosts)"
    cut = lambda c, job: subprocess.run([TEST_CLUSTER, "link", c.cluster, "2", "down"], check=True)
    return _running_job(launcher, ctx, cut, hosts=(1, 2))


def ctrl_c_worker_ignores_sigterm(launcher, ctx):
    # Ctrl-C in node 0's terminal: SIGINT to node 0's foreground process group (the launcher's session).
    ctrl_c = lambda c, job: os.killpg(job.procs[0].pid, 2)
    return _running_job(launcher, ctx, ctrl_c, worker_args=("--ignore-sigterm", "--hang"))


def garbage_to_rendezvous(launcher, ctx):
    fw = paths.fake_worker()
    if launcher == "ddplaunch":
        nodes = two(lambda r: ddp(ctx, r, f"127.0.0.1:{ctx.port}", fw, "--report-init"))
        port = ctx.port
    else:
        nodes = two(lambda r: tr_static(ctx, r, "127.0.0.1", ctx.port, fw))
        port = ctx.port  # static rendezvous: node 0's agent hosts the TCPStore on --master_port

    def garbage(c):
        if not wait_listening("127.0.0.1", port):
            raise RuntimeError(f"node 0 never listened on 127.0.0.1:{port}")
        send_garbage("127.0.0.1", port)
    return Plan(nodes, after_first=garbage)


# (name, plan function, in --quick)
FAULTS = [
    ("worker port in use", worker_port_in_use, True),
    ("master port blackholed (nftables DROP)", master_port_blackholed, False),
    ("MASTER_ADDR unresolvable", master_unresolvable, True),
    ("MASTER_ADDR=127.0.0.1 on 2 netns hosts", master_loopback_multinode, False),
    ("bogus NCCL_SOCKET_IFNAME", bogus_nccl_ifname, False),
    ("one rank fails init once", rank_fails_init_once, True),
    ("one rank hangs in init", rank_hangs_in_init, False),
    ("node 1's launcher SIGKILLed mid-run", node_launcher_sigkilled, False),
    ("link cut (veth down) mid-run", link_cut, False),
    ("Ctrl-C, workers ignore SIGTERM", ctrl_c_worker_ignores_sigterm, True),
    ("garbage sent to the rendezvous port", garbage_to_rendezvous, False),
]
