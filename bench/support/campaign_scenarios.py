"""The crash campaign's scenarios (bench/run crash-campaign): faults and healthy-but-slow or noisy cases
on a 2-3 node gloo DDP job on netns hosts. A scenario only says what to change (environment per node,
a node's master address, what to do before the start and once training is under way); the launch
modes (campaign_modes.py) and the run (campaign_run.py) are the same for all of them.
Durations are multiples of T, the seed recipe's timeout for the job's node count times the campaign's
time scale, so a "slow" phase is slower than the recipe's deadline under every scale."""
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

import paths
from seed_recipe import recipe_timeout_s

TEST_CLUSTER = paths.TEST_CLUSTER


def host_addr(i):
    """eth0 address of netns host i (1-based), as tests/clusters/test-cluster assigns it."""
    return f"198.18.0.{10 + i}"


@dataclass
class Scenario:
    name: str
    kind: str                 # "fault" or "healthy"
    recoverable: bool         # a launcher can bring the job to completion (always so for healthy ones)
    nodes: int = 2
    env: dict = field(default_factory=dict)        # every node
    node_env: dict = field(default_factory=dict)   # node index (0-based) -> extra environment
    master_of: dict = field(default_factory=dict)  # node index -> the wrong master address it is given
    wrapper: bool = False                          # the job is started through a buffering shell wrapper
    loses_node: int = -1                           # node index whose launcher is killed (a spare may replace it)
    before: Optional[Callable] = None              # (run) before any launcher starts
    during: Optional[Callable] = None              # (run) once training passed run.inject_step


def ns_run(run, host, *argv):
    subprocess.run([TEST_CLUSTER, *argv[:1], run.cluster, str(host), *argv[1:]], check=True, capture_output=True)


def later(run, seconds, fn):
    """fn() after seconds, unless the run ends first (run.timers are cancelled at its end)."""
    t = threading.Timer(seconds, fn)
    t.daemon = True
    run.timers.append(t)
    t.start()


# --- faults -----------------------------------------------------------------------------------------

def hold_port_at_start(run):
    # A stale process of an earlier job still listens on the job's configured port on node 0's host.
    holder = subprocess.Popen([TEST_CLUSTER, "exec", run.cluster, "1", "--", "/usr/bin/python3", "-c",
                               "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
                               f"s.bind(('0.0.0.0', {run.port})); s.listen(); time.sleep({run.t(0.5):.1f})"],
                              start_new_session=True)
    run.helpers.append(holder)
    run.wait_listening(host_addr(1), run.port)


def block_port_at_start(run):
    ns_run(run, 1, "block", str(run.port))
    later(run, run.t(0.5), lambda: ns_run(run, 1, "unblock", str(run.port)))


def kill_rank1_worker(run):
    pid = run.worker_pid(1)
    if pid:
        os.kill(pid, signal.SIGKILL)


def kill_node1_launcher(run):
    run.job.procs[1].kill()


def link_down_briefly(run):
    ns_run(run, 2, "link", "down")
    later(run, run.t(0.3), lambda: ns_run(run, 2, "link", "up"))


def random_drop(run):
    # nftables in node 1's namespace drops 5% of incoming packets (TCP retransmits; nothing is lost for good).
    rules = ("table inet campaign_loss {\n chain input {\n  type filter hook input priority 0; policy accept;\n"
             "  meta l4proto tcp numgen random mod 100 < 5 drop\n }\n}\n")
    subprocess.run([TEST_CLUSTER, "exec", run.cluster, "2", "--", "nft", "-f", "-"], input=rules.encode(),
                   check=True, capture_output=True)


def unreachable_addr():
    return "198.18.0.99"  # in the cluster's subnet, no host: connects time out


FAULTS = [
    Scenario("rendezvous port held by a stale process (0.5 T at start)", "fault", True, before=hold_port_at_start),
    Scenario("rendezvous port blocked (nftables DROP) for 0.5 T at start", "fault", True, before=block_port_at_start),
    Scenario("master address wrong on node 1 (unreachable host)", "fault", False, master_of={1: unreachable_addr()}),
    Scenario("master address 127.0.0.1 on node 1", "fault", False, master_of={1: "127.0.0.1"}),
    Scenario("bogus NCCL_SOCKET_IFNAME on node 1", "fault", False, node_env={1: {"NCCL_SOCKET_IFNAME": "bogus0"}}),
    Scenario("rank 1 fails init once (NCCL error text)", "fault", True, env={"CAMPAIGN_FAIL_INIT_RANKS": "1"}),
    Scenario("rank 1 hangs in init once", "fault", True, env={"CAMPAIGN_HANG_INIT_RANKS": "1"}),
    Scenario("node 1's launcher SIGKILLed mid-run", "fault", False, loses_node=1, during=kill_node1_launcher),
    Scenario("node 1's link down for 0.3 T mid-run", "fault", True, during=link_down_briefly),
    Scenario("rank 1's worker SIGKILLed mid-run", "fault", True, during=kill_rank1_worker),
    Scenario("5% packet loss into node 1 (nftables random drop)", "fault", True, before=random_drop),
]

# --- healthy but slow or noisy ------------------------------------------------------------------------

def slow_link(run):
    # Every host's eth0 sends at 8 Mbit/s (tbf): a larger world on a slow network.
    for host in range(1, run.scenario.nodes + 1):
        subprocess.run([TEST_CLUSTER, "exec", run.cluster, str(host), "--", "tc", "qdisc", "add", "dev", "eth0",
                        "root", "tbf", "rate", "8mbit", "burst", "32kbit", "latency", "400ms"],
                       check=True, capture_output=True)


HEALTHY = [
    Scenario("no fault", "healthy", True),
    Scenario("rank 1's setup takes 1.3 T before init", "healthy", True,
             env={"CAMPAIGN_SETUP_RANKS": "1", "CAMPAIGN_SETUP_S": "@1.3"}),
    Scenario("every rank's setup takes 1.3 T before init", "healthy", True,
             env={"CAMPAIGN_SETUP_RANKS": "all", "CAMPAIGN_SETUP_S": "@1.3"}),
    Scenario("rank 0 alone evaluates for 1.3 T mid-run", "healthy", True,
             env={"CAMPAIGN_PAUSE_S": "@1.3", "CAMPAIGN_PAUSE_STEP": "@inject"}),
    Scenario("node 1 CPU-starved (busy loop, 15 ms per step)", "healthy", True,
             env={"CAMPAIGN_BUSY_RANKS": "1", "CAMPAIGN_BUSY_MS": "15"}),
    Scenario("job started by a buffering shell wrapper", "healthy", True, wrapper=True),
    Scenario("chatty ranks (a 250-byte stderr line per step)", "healthy", True, env={"CAMPAIGN_CHATTY_RANKS": "all"}),
    Scenario("3 nodes on an 8 Mbit/s link", "healthy", True, nodes=3, before=slow_link),
]

SCENARIOS = FAULTS + HEALTHY
# The ctest smoke run: a clean run under each launcher the harness drives (torchrun's recipe
# mode is the same torchrun line with one more variable, run by the full campaign), and a fault
# under ddplaunch alone (its restart and its leftovers are what the smoke test checks; the
# torchrun modes' restarts would only add minutes of torch imports to the suite).
QUICK = {"no fault": ["torchrun", "ddplaunch"], "rank 1 fails init once (NCCL error text)": ["ddplaunch"]}


def deadline_unit(scenario, scale):
    """T: the seed recipe's timeout for this job (no dedicated NIC), scaled."""
    return recipe_timeout_s(scenario.nodes, False, scale)
