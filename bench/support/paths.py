"""Finds the built programs the benchmark scripts run (ddplaunch, fake_worker) and torchrun.
Order: $DDPLAUNCH_BIN / $FAKE_WORKER_BIN, then build-bench, build, build-* under the repository."""
import glob
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCHRUN = "/usr/bin/torchrun"
SUPPORT = os.path.join(REPO, "bench", "support")
TEST_CLUSTER = os.path.join(REPO, "tests", "clusters", "test-cluster")


def _find(env_var, rel):
    if os.environ.get(env_var):
        return os.environ[env_var]
    dirs = [os.path.join(REPO, "build-bench"), os.path.join(REPO, "build")]
    dirs += sorted(glob.glob(os.path.join(REPO, "build-*")))
    for d in dirs:
        path = os.path.join(d, rel)
        if os.access(path, os.X_OK):
            return path
    raise SystemExit(f"{rel} not found in {REPO}/build*: build it "
                     f"(cmake --build <dir> --target {os.path.basename(rel)}) or set {env_var}")


def built(rel):
    """A program of the build (rel: its path in the build folder), found as ddplaunch is."""
    return _find("BUILT_" + os.path.basename(rel).upper().replace("-", "_") + "_BIN", rel)


def ddplaunch():
    return _find("DDPLAUNCH_BIN", "launcher/ddplaunch")


def fake_worker():
    return _find("FAKE_WORKER_BIN", "tests/fake_worker/fake_worker")


def have_torchrun():
    return os.access(TORCHRUN, os.X_OK)


def bench_fail_once():
    return _find("BENCH_FAIL_ONCE_BIN", "tests/bench/bench_fail_once")


def bench_fail_once_static():
    return _find("BENCH_FAIL_ONCE_STATIC_BIN", "tests/bench/bench_fail_once_static")
