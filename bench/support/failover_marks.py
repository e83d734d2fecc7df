"""What the failover benchmarks share (bench/run membership, master-loss): kill a node as a
whole, and read the marks bench/support/elastic_worker.py leaves (process start, init
done) to time a new generation from a fault."""
import glob
import os
import signal
import statistics
import time


def kill_session(sid):
    """SIGKILL every process of a launcher's session (launcher, agent helpers, workers): the node
    dies as a whole, as when its machine crashes. (SIGKILL of a torchrun agent alone leaves its
    workers running on, orphaned.)"""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getsid(int(name)) == sid:
                    os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def marks(directory):
    """[(time, what, restart, rank, world)] from every worker's mark file."""
    out = []
    for path in glob.glob(os.path.join(directory, "[0-9]*")):
        for line in open(path):
            t, what, restart, rank, world = line.split()
            out.append((float(t), what, int(restart), int(rank), int(world)))
    return out


def wait_marks(directory, what, count, newer_than, deadline):
    """Time of the count-th `what` mark after newer_than (None if not seen before deadline)."""
    while time.monotonic() < deadline:
        seen = sorted(t for t, w, *_ in marks(directory) if w == what and t > newer_than)
        if len(seen) >= count:
            return seen[count - 1]
        time.sleep(0.05)
    return None


def seconds_summary(values, bound_s):
    """"median s (min, max)" of the times that happened; the runs where it did not, within
    bound_s, said as such."""
    ok = [v for v in values if v is not None]
    if not ok:
        return f"did not happen within {bound_s:.0f} s ({len(values)} of {len(values)} runs)"
    text = f"{statistics.median(ok):.2f} s (min {min(ok):.2f}, max {max(ok):.2f})"
    if len(ok) < len(values):
        text += f"; {len(values) - len(ok)} of {len(values)} runs not within {bound_s:.0f} s"
    return text
