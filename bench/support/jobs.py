"""Runs one multi-launcher job for bench/run restart and bench/run fault-matrix: every launcher in
its own session with output in files, a bounded wait, and a tag in the environment so that every
descendant (even one re-parented to init) can be found afterwards and reported as left behind."""
import os
import signal
import subprocess
import time

TAG_VAR = "DDPL_BENCH_TAG"


def tagged_pids(tag):
    """PIDs of live processes whose environment holds TAG_VAR=tag."""
    needle = f"{TAG_VAR}={tag}".encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read() + b"\0":
                    with open(f"/proc/{name}/stat") as s:
                        if s.read().rsplit(")", 1)[1].split()[0] == "Z":
                            continue
                    found.append(int(name))
        except OSError:
            pass
    return found


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


class Job:
    """A set of launcher processes (one per node) started and waited on together."""

    def __init__(self, tag, logdir, env=None):
        self.tag, self.logdir = tag, logdir
        self.env = dict(os.environ if env is None else env)
        self.env[TAG_VAR] = tag
        self.procs, self.outs = [], []
        self.seen = set()  # every tagged PID observed while the job ran
        self.exited_at = {}  # launcher index -> time.monotonic() when its exit was first seen

    def start(self, argv, extra_env=None):
        i = len(self.procs)
        out = open(os.path.join(self.logdir, f"node{i}.out"), "wb")
        env = dict(self.env)
        env.update(extra_env or {})
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                           stdin=subprocess.DEVNULL, start_new_session=True))
        self.outs.append(out)
        return self.procs[-1]

    def poll_pids(self):
        self.seen.update(tagged_pids(self.tag))

    def wait(self, deadline):
        """Waits until every launcher exited or time.monotonic() passes deadline; True if all exited."""
        while time.monotonic() < deadline:
            self.poll_pids()
            for i, p in enumerate(self.procs):
                if p.poll() is not None and i not in self.exited_at:
                    self.exited_at[i] = time.monotonic()
            if all(p.poll() is not None for p in self.procs):
                return True
            time.sleep(0.05)
        return all(p.poll() is not None for p in self.procs)

    def stop(self, grace_s=10.0):
        """SIGTERM every live launcher (as a scheduler would), then SIGKILL after grace_s."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        if not self.wait(time.monotonic() + grace_s):
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
            self.wait(time.monotonic() + 5)

    def returncodes(self):
        return [p.poll() for p in self.procs]

    def leftovers(self, settle_s=1.0):
        """Tagged processes alive settle_s after the launchers exited: 'pid comm' strings."""
        time.sleep(settle_s)
        return [f"{pid} {comm(pid)}" for pid in tagged_pids(self.tag)]

    def cleanup(self):
        """Kills whatever is still tagged (leftovers were recorded before) and closes the logs."""
        for _ in range(10):
            pids = tagged_pids(self.tag)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.1)
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for o in self.outs:
            o.close()

    def output(self, i):
        with open(os.path.join(self.logdir, f"node{i}.out"), "rb") as f:
            return f.read().decode(errors="replace")


def free_port():
    """A port no other test or benchmark process is handed (see reserved_ports.py)."""
    import reserved_ports
    return reserved_ports.free_port()
