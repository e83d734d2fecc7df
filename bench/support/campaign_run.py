"""One run of the crash campaign: a fresh netns cluster (tests/clusters/test-cluster, 3 hosts with their own
hostnames), the scenario's changes, one launcher per node started in its own session with a tag in
its environment, the mid-run injection once training passed the drawn step, a bound, and then the
record: outcome, time, what was left behind. Everything the run created is removed in its finally."""
import os
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field

import campaign_modes
import jobs
from campaign_scenarios import TEST_CLUSTER, deadline_unit, host_addr
from diagnosis import diagnosis

HOSTS = 3
PORT = 29500          # the port users leave at its default
DEAD_PORT = 29999     # nobody listens there: "hangs in init"
STEPS = 200


@dataclass
class Result:
    scenario: str
    kind: str
    recoverable: bool
    mode: str
    index: int
    outcome: str            # completed | failed | hung
    seconds: float          # start of the launchers -> the last one exited (the bound when hung)
    leftovers: list = field(default_factory=list)   # "pid comm" alive 1 s after the launchers exited
    diagnosis: str = ""
    first_error_s: float = None   # start -> the first launcher that exited non-zero (none: None)
    spare: bool = False
    note: str = ""

    @property
    def false_crash(self):
        return self.kind == "healthy" and self.outcome != "completed"


class Run:
    def __init__(self, scenario, mode, index, seed, scale, bound_s, cluster, keep_dir):
        self.scenario, self.mode, self.index = scenario, mode, index
        self.scale, self.bound_s, self.cluster = scale, bound_s, cluster
        draw = random.Random(f"{seed}/{index}")  # the same draws under every mode: paired runs
        self.inject_step = draw.randint(60, 140)
        self.port, self.job_id = PORT, f"campaign-{seed}-{index}"
        self.dir = os.path.join(keep_dir, f"run{index:03d}-{mode.replace(' ', '').replace('+', '-')}")
        self.timers, self.helpers = [], []
        self.job = None
        self.unit = deadline_unit(scenario, scale)

    def t(self, multiple):
        """multiple × T seconds (T: the recipe's scaled timeout for this job)."""
        return multiple * self.unit

    def wait_listening(self, addr, port, timeout_s=10.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            r = subprocess.run([TEST_CLUSTER, "exec", self.cluster, "1", "--", "/usr/bin/python3", "-c",
                                f"import socket; socket.create_connection(('{addr}', {port}), timeout=0.5)"],
                               capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the stale port holder never listened on {addr}:{port}")

    def worker_pid(self, rank):
        try:
            with open(os.path.join(self.dir, f"pid.r{rank}")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def progress(self):
        try:
            with open(os.path.join(self.dir, "progress")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return -1

    def completed_steps(self):
        try:
            with open(os.path.join(self.dir, "done")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return 0

    # --- the cluster -------------------------------------------------------------------------------

    def hostname(self, host):
        return f"{self.cluster}-node{host}"

    def cluster_up(self):
        subprocess.run([TEST_CLUSTER, "up", self.cluster, str(HOSTS)], check=True, capture_output=True)
        # Each host resolves every host's name to its address (ip netns exec mounts /etc/netns/NS/hosts
        # over /etc/hosts), as on a real cluster: torchrun's c10d rendezvous hosts its store only where
        # the endpoint matches this machine's hostname, and gloo binds the address its hostname resolves to.
        hosts = "127.0.0.1 localhost\n" + "".join(f"{host_addr(h)} {self.hostname(h)}\n" for h in range(1, HOSTS + 1))
        for h in range(1, HOSTS + 1):
            os.makedirs(f"/etc/netns/{self.cluster}-h{h}", exist_ok=True)
            with open(f"/etc/netns/{self.cluster}-h{h}/hosts", "w") as f:
                f.write(hosts)

    def cluster_pids(self):
        pids = []
        for h in ["br"] + [f"h{i}" for i in range(1, HOSTS + 1)]:
            out = subprocess.run(["ip", "netns", "pids", f"{self.cluster}-{h}"], capture_output=True, text=True).stdout
            pids += [int(p) for p in out.split()]
        return pids

    def cluster_down(self):
        subprocess.run([TEST_CLUSTER, "down", self.cluster], capture_output=True)
        for h in range(1, HOSTS + 1):
            shutil.rmtree(f"/etc/netns/{self.cluster}-h{h}", ignore_errors=True)

    def in_host(self, host, argv):
        # Its own UTS namespace per launcher, so every host has its own hostname.
        return [TEST_CLUSTER, "exec", self.cluster, str(host), "--", "unshare", "--uts", "/bin/sh", "-c",
                'hostname "$0" && exec "$@"', self.hostname(host), *argv]

    # --- the run -----------------------------------------------------------------------------------

    def scenario_env(self, node):
        env = {"CAMPAIGN_RUN_DIR": self.dir, "CAMPAIGN_STEPS": str(STEPS), "CAMPAIGN_DEAD_PORT": str(DEAD_PORT),
               "CAMPAIGN_TIME_SCALE": f"{self.scale:g}"}
        for k, v in {**self.scenario.env, **self.scenario.node_env.get(node, {})}.items():
            env[k] = (str(self.inject_step) if v == "@inject" else f"{self.t(float(v[1:])):.2f}"
                      if v.startswith("@") else v)
        return env

    def execute(self):
        os.makedirs(self.dir)
        self.job = jobs.Job(f"cc-{os.getpid()}-{self.index}-{time.monotonic_ns()}", self.dir)
        self.job.env.pop("PYTHONUNBUFFERED", None)
        s = self.scenario
        plan = campaign_modes.launchers(self.mode, self, lambda node: s.master_of.get(node, host_addr(1)))
        try:
            self.cluster_up()
            if s.before:
                s.before(self)
            t0 = time.monotonic()
            for node, (argv, env) in enumerate(plan):
                self.job.start(self.in_host(node + 1, argv), {**env, **self.scenario_env(node)})
            injected, ended_at, first_error = s.during is None, None, None
            deadline = t0 + self.bound_s
            while time.monotonic() < deadline:
                if first_error is None and any(p.poll() not in (None, 0, -9) for p in self.job.procs):
                    first_error = time.monotonic() - t0
                if all(p.poll() is not None for p in self.job.procs):
                    ended_at = time.monotonic()
                    break
                if not injected and self.progress() >= self.inject_step:
                    s.during(self)
                    injected = True
                time.sleep(0.1)
            text = "\n".join(self.job.output(i) for i in range(len(self.job.procs)))
            if ended_at is None:
                self.job.stop(grace_s=5)
            helpers = {h.pid for h in self.helpers}
            time.sleep(1.0)
            left = sorted((set(jobs.tagged_pids(self.job.tag)) | set(self.cluster_pids())) - helpers)
            left = [f"{pid} {jobs.comm(pid)}" for pid in left]
            return self.record(ended_at, t0, text, left, injected, first_error)
        finally:
            for t in self.timers:
                t.cancel()
            self.job.cleanup()
            for h in self.helpers:
                if h.poll() is None:
                    os.killpg(h.pid, signal.SIGKILL)
                h.wait()
            self.cluster_down()

    def record(self, ended_at, t0, text, left, injected, first_error):
        s = self.scenario
        rcs = self.job.returncodes()
        killed = {s.loses_node} if injected and s.loses_node >= 0 else set()
        survivors_ok = all(rc == 0 for i, rc in enumerate(rcs) if i not in killed)
        if ended_at is None:
            outcome, secs = "hung", self.bound_s
        elif survivors_ok and self.completed_steps() == STEPS:
            outcome, secs = "completed", ended_at - t0
        else:
            outcome, secs = "failed", ended_at - t0
        note = "" if injected else "the mid-run fault was never injected (training never reached its step)"
        return Result(s.name, s.kind, s.recoverable, self.mode, self.index, outcome, secs, left,
                      diagnosis(text, outcome == "completed"), first_error, campaign_modes.uses_spare(self.mode, s), note)
