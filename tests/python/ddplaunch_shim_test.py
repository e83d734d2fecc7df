"""Tests for worker_shim/python: report() datagrams in the DDPL1 format, install() wrapping of
torch.distributed.init_process_group (events, arguments passed through unchanged — never a
timeout of ddplaunch's —, errors re-raised), the autoload sitecustomize (lazy, chains the one it
shadows, never breaks the program), and a real 2-process gloo job in which one rank pauses
longer than DDPLAUNCH_TIMEOUT_S between two collectives and still succeeds.
Run: /usr/bin/python3 tests/python/ddplaunch_shim_test.py -v
"""

import datetime
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_DIR = os.environ.get("DDPLAUNCH_SHIM_PYTHON_DIR") or os.path.join(
    HERE, "..", "..", "worker_shim", "python")
AUTOLOAD_DIR = os.path.join(SHIM_DIR, "autoload")
sys.path.insert(0, SHIM_DIR)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "support"))

import ddplaunch_shim  # noqa: E402

try:
    import torch.distributed  # noqa: F401
    HAVE_TORCH = torch.distributed.is_available()
except ImportError:
    HAVE_TORCH = False

_ENV_KEYS = ("DDPLAUNCH_STATUS_SOCKET", "RANK", "DDPLAUNCH_GENERATION", "DDPLAUNCH_TIMEOUT_S")


def parse_status(data):
    """Mirror of contract::parse_status: (event, rank, generation, pid, detail) or None."""
    parts = data.decode("utf-8").split(" ", 5)
    if len(parts) < 5 or parts[0] != "DDPL1" or parts[1] not in ddplaunch_shim.EVENTS:
        return None
    try:
        rank, generation, pid = int(parts[2]), int(parts[3]), int(parts[4])
    except ValueError:
        return None
    if rank < 0 or generation < 0 or pid <= 0:
        return None
    return parts[1], rank, generation, pid, parts[5] if len(parts) > 5 else ""


from reserved_ports import free_port  # noqa: E402  (bench/support: never collides with parallel tests)


class StatusChannelTest(unittest.TestCase):
    """A bound datagram socket in a temp dir, with the worker's env pointing at it."""

    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in _ENV_KEYS}
        self.dir = tempfile.mkdtemp(prefix="ddpl-pyshim-")
        self.path = os.path.join(self.dir, "status.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(5)
        os.environ.update({"DDPLAUNCH_STATUS_SOCKET": self.path, "RANK": "3",
                           "DDPLAUNCH_GENERATION": "2"})

    def tearDown(self):
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def receive(self):
        message = parse_status(self.sock.recv(8192))
        self.assertIsNotNone(message, "datagram is not a valid DDPL1 status line")
        return message

    def assert_nothing_pending(self):
        self.sock.settimeout(0.2)
        with self.assertRaises(socket.timeout):
            self.sock.recv(8192)


class ReportTest(StatusChannelTest):
    def test_sends_one_parseable_datagram(self):
        self.assertTrue(ddplaunch_shim.report("init_failed", "boom\r\nsecond line"))
        event, rank, generation, pid, detail = self.receive()
        self.assertEqual((event, rank, generation, pid), ("init_failed", 3, 2, os.getpid()))
        self.assertEqual(detail, "boom | second line")

    def test_empty_detail(self):
        self.assertTrue(ddplaunch_shim.report("heartbeat"))
        self.assertEqual(self.receive()[0], "heartbeat")

    def test_long_detail_is_truncated_to_the_limit(self):
        self.assertTrue(ddplaunch_shim.report("init_failed", "x" * 10000))
        data = self.sock.recv(10000)
        self.assertEqual(len(data), ddplaunch_shim.MAX_STATUS_BYTES)

    def test_does_nothing_without_socket_rank_or_with_bad_values(self):
        self.assertFalse(ddplaunch_shim.report("no_such_event"))
        os.environ["RANK"] = "-1"
        self.assertFalse(ddplaunch_shim.report("init_ok"))
        os.environ["RANK"] = "abc"
        self.assertFalse(ddplaunch_shim.report("init_ok"))
        os.environ["RANK"] = "0"
        os.environ["DDPLAUNCH_GENERATION"] = "x"
        self.assertFalse(ddplaunch_shim.report("init_ok"))
        os.environ["DDPLAUNCH_GENERATION"] = "0"
        os.environ["DDPLAUNCH_STATUS_SOCKET"] = os.path.join(self.dir, "gone.sock")
        self.assertFalse(ddplaunch_shim.report("init_ok"))  # no listener: no exception
        del os.environ["DDPLAUNCH_STATUS_SOCKET"]
        self.assertFalse(ddplaunch_shim.report("init_ok"))
        self.assert_nothing_pending()


class StoreInitMethodTest(unittest.TestCase):
    """torchrun's --master-port names the store's port; under ddplaunch that port is the
    launchers' rendezvous: a tcp:// init_method naming it is pointed at MASTER_ADDR:MASTER_PORT."""

    KEYS = ("DDPLAUNCH_RENDEZVOUS_PORT", "MASTER_ADDR", "MASTER_PORT")

    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in self.KEYS}
        os.environ.update({"DDPLAUNCH_RENDEZVOUS_PORT": "29500", "MASTER_ADDR": "127.0.0.1",
                           "MASTER_PORT": "41000"})

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_the_rendezvous_port_is_pointed_at_the_store(self):
        f = ddplaunch_shim.store_init_method
        self.assertEqual(f("tcp://localhost:29500"), "tcp://127.0.0.1:41000")
        self.assertEqual(f("tcp://node0:29500?rank=1&world_size=2"), "tcp://127.0.0.1:41000?rank=1&world_size=2")
        os.environ["MASTER_ADDR"] = "2001:2::1"
        self.assertEqual(f("tcp://[2001:2::1]:29500"), "tcp://[2001:2::1]:41000")

    def test_anything_else_is_unchanged(self):
        f = ddplaunch_shim.store_init_method
        for method in ("env://", "tcp://localhost:41000", "tcp://localhost:29501", "file:///tmp/x", None, "tcp://h"):
            self.assertEqual(f(method), method)
        del os.environ["DDPLAUNCH_RENDEZVOUS_PORT"]  # not under ddplaunch (or an old one)
        self.assertEqual(f("tcp://localhost:29500"), "tcp://localhost:29500")


@unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
class InstallTest(StatusChannelTest):
    """install() over a recording stand-in for init_process_group with torch's signature."""

    def setUp(self):
        super().setUp()
        import torch.distributed as dist
        self.dist = dist
        self.real = dist.init_process_group
        self.calls = []
        self.fail_with = None

        def init_process_group(backend, init_method=None,
                               timeout=datetime.timedelta(seconds=1800), world_size=-1,
                               rank=-1, store=None, group_name="", pg_options=None):
            self.calls.append({"backend": backend, "timeout": timeout})
            if self.fail_with:
                raise self.fail_with

        dist.init_process_group = init_process_group
        self.assertTrue(ddplaunch_shim.install())

    def tearDown(self):
        self.dist.init_process_group = self.real
        super().tearDown()

    def test_reports_begin_and_ok_and_never_applies_the_launcher_timeout(self):
        # DDPLAUNCH_TIMEOUT_S is the launcher's init deadline: in PyTorch `timeout` would also
        # bound the store wait and every later collective, so the shim must not pass it.
        os.environ["DDPLAUNCH_TIMEOUT_S"] = "5"
        self.dist.init_process_group("gloo")
        self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(seconds=1800))
        self.assertEqual(self.receive()[:2], ("init_begin", 3))
        self.assertEqual(self.receive()[:2], ("init_ok", 3))

    def test_caller_timeout_is_passed_through_positional_or_keyword(self):
        os.environ["DDPLAUNCH_TIMEOUT_S"] = "42"
        self.dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=7))
        self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(seconds=7))
        self.dist.init_process_group("gloo", "env://", datetime.timedelta(seconds=8))
        self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(seconds=8))
        self.dist.init_process_group(backend="gloo", timeout=None)
        self.assertIsNone(self.calls[-1]["timeout"])

    def test_debug_gives_a_day_to_groups_without_a_timeout_of_the_programs(self):
        os.environ["DDPLAUNCH_DEBUG_TIMEOUT_S"] = "86400"
        try:
            self.dist.init_process_group("gloo")
            self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(days=1))
            self.dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=7))  # the program's own: kept
            self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(seconds=7))
            self.dist.init_process_group("gloo", "env://", datetime.timedelta(seconds=8))
            self.assertEqual(self.calls[-1]["timeout"], datetime.timedelta(seconds=8))
        finally:
            del os.environ["DDPLAUNCH_DEBUG_TIMEOUT_S"]

    def test_failure_is_reported_with_its_text_and_reraised(self):
        self.fail_with = RuntimeError("Connection reset by peer\nat node 2")
        with self.assertRaises(RuntimeError):
            self.dist.init_process_group("gloo")
        self.assertEqual(self.receive()[0], "init_begin")
        event, _, _, _, detail = self.receive()
        self.assertEqual(event, "init_failed")
        self.assertEqual(detail, "RuntimeError: Connection reset by peer | at node 2")

    def test_install_twice_wraps_once(self):
        self.assertTrue(ddplaunch_shim.install())
        self.dist.init_process_group("gloo")
        self.receive()
        self.receive()
        self.assert_nothing_pending()


class AutoloadTest(StatusChannelTest):
    """The autoload folder on PYTHONPATH of a fresh interpreter, as ddplaunch runs workers."""

    def run_python(self, code, extra_path=(), env=None):
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env["PYTHONPATH"] = os.pathsep.join([AUTOLOAD_DIR, *extra_path])
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                              capture_output=True, text=True, timeout=120)

    def test_is_lazy_and_chains_the_shadowed_sitecustomize(self):
        other = os.path.join(self.dir, "other")
        os.makedirs(other)
        with open(os.path.join(other, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.DDPL_CHAINED = True\n")
        result = self.run_python("""
            import builtins, sys
            print(getattr(builtins, "DDPL_CHAINED", False), "torch" in sys.modules,
                  "ddplaunch_shim" in sys.modules)
            """, extra_path=[other])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split(), ["True", "False", "True"])

    def test_broken_shadowed_sitecustomize_does_not_break_the_program(self):
        other = os.path.join(self.dir, "broken")
        os.makedirs(other)
        with open(os.path.join(other, "sitecustomize.py"), "w") as f:
            f.write("raise RuntimeError('broken site hook')\n")
        result = self.run_python("print('ran')", extra_path=[other])
        self.assertEqual((result.returncode, result.stdout.strip()), (0, "ran"), result.stderr)

    def test_stack_signal_dumps_every_thread_to_the_launchers_file_and_the_program_goes_on(self):
        import signal
        signum = signal.SIGRTMIN + 5
        result = self.run_python("""
            import os, signal, time
            def waiting_here():
                os.kill(os.getpid(), %d)  # what the launcher sends
                time.sleep(0.2)
                return "still running"
            print(waiting_here())
            """ % signum, env={"DDPLAUNCH_STATUS_SOCKET": os.path.join(self.dir, "sock"), "RANK": "0",
                               "DDPLAUNCH_STACK_DIR": self.dir, "DDPLAUNCH_STACK_SIGNAL": str(signum)})
        self.assertEqual(result.stdout.strip(), "still running", result.stderr)
        dumps = [f for f in os.listdir(self.dir) if f.startswith("stack-")]
        self.assertEqual(len(dumps), 1, os.listdir(self.dir))
        with open(os.path.join(self.dir, dumps[0])) as f:
            text = f.read()
        self.assertIn("most recent call first", text)
        self.assertIn("in waiting_here", text)

    def test_after_the_exit_handlers_the_stack_signal_is_ignored_not_fatal(self):
        # The interpreter unregisters faulthandler as it finalizes; the shim's exit handler
        # (the last to run) has the signal ignored by then, so a stack request that meets a
        # rank shutting down does not end it.
        import signal
        signum = signal.SIGRTMIN + 5
        result = self.run_python("""
            import atexit, os
            def disposition(n):  # as the launcher reads it
                masks = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith("Sig"))
                if int(masks["SigCgt"], 16) >> (n - 1) & 1: return "caught"
                return "ignored" if int(masks["SigIgn"], 16) >> (n - 1) & 1 else "default"
            print(disposition(%d))
            atexit._run_exitfuncs()  # what the interpreter does first as it exits
            print(disposition(%d))
            os.kill(os.getpid(), %d)
            print("survived")
            """ % (signum, signum, signum),
            env={"DDPLAUNCH_STATUS_SOCKET": os.path.join(self.dir, "sock"), "RANK": "0",
                 "DDPLAUNCH_STACK_DIR": self.dir, "DDPLAUNCH_STACK_SIGNAL": str(signum)})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split("\n")[:3], ["caught", "ignored", "survived"], result.stdout + result.stderr)

    def test_without_stack_variables_no_handler_and_no_file(self):
        result = self.run_python("import ddplaunch_shim; print(ddplaunch_shim.register_stack_dump())",
                                 env={"DDPLAUNCH_STATUS_SOCKET": os.path.join(self.dir, "sock"), "RANK": "0",
                                      "DDPLAUNCH_STACK_DIR": "", "DDPLAUNCH_STACK_SIGNAL": ""})
        self.assertEqual(result.stdout.strip(), "False", result.stderr)
        self.assertFalse([f for f in os.listdir(self.dir) if f.startswith("stack-")])

    def test_without_status_socket_nothing_is_installed(self):
        result = self.run_python("import sys; print('ddplaunch_shim' in sys.modules)",
                                 env={"DDPLAUNCH_STATUS_SOCKET": ""})
        self.assertEqual(result.stdout.strip(), "False", result.stderr)

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_real_gloo_init_reports_and_keeps_torchs_default_timeout(self):
        result = self.run_python("""
            import torch.distributed as dist
            dist.init_process_group("gloo")
            print(dist.distributed_c10d._get_default_store().timeout.total_seconds())
            dist.destroy_process_group()
            try:
                dist.init_process_group("no_such_backend")
            except Exception as e:
                print("raised", type(e).__name__)
            """, env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                      "RANK": "0", "WORLD_SIZE": "1", "DDPLAUNCH_TIMEOUT_S": "37"})
        self.assertEqual(result.returncode, 0, result.stderr)
        # 1800 s: torch.distributed's own default (default_pg_timeout), not the 37 s above.
        self.assertEqual(result.stdout.split(), ["1800.0", "raised", "ValueError"], result.stderr)
        events = [self.receive() for _ in range(4)]
        self.assertEqual([e[0] for e in events],
                         ["init_begin", "init_ok", "init_begin", "init_failed"])
        self.assertEqual(events[0][1], 0)
        self.assertIn("no_such_backend", events[3][4].lower())

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_unmodified_ddp_loop_reports_steps_rarely_and_sections_bracket_a_pause(self):
        # An unmodified DDP loop (SGD, and a custom optimizer class defined after init)
        # reports "step" datagrams — about one a second, not one per step — with the count
        # and the longest gap; a 1.5 s step shows as the gap; section() brackets a pause.
        result = self.run_python("""
            import time, torch, torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            dist.init_process_group("gloo")
            model = DDP(torch.nn.Linear(4, 4))
            sgd = torch.optim.SGD(model.parameters(), lr=0.1)
            class MyAdam(torch.optim.Adam):
                def step(self, closure=None):
                    return super().step(closure)
            adam = MyAdam(model.parameters())
            for i in range(300):
                opt = sgd if i % 2 else adam
                opt.zero_grad(); model(torch.randn(2, 4)).sum().backward(); opt.step()
                if i == 150:
                    time.sleep(1.5)
            import ddplaunch_shim
            print("COUNTED", ddplaunch_shim._counter.steps)
            with ddplaunch_shim.section("checkpoint"):
                pass
            dist.destroy_process_group()
            """, env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                      "RANK": "0", "WORLD_SIZE": "1"})
        self.assertEqual(result.returncode, 0, result.stderr)
        # Every optimizer step once (MyAdam's super().step() is not a second step), plus the
        # first DDP forward, counted before any optimizer step was seen.
        self.assertIn("COUNTED 301", result.stdout)
        events = []
        self.sock.settimeout(2)
        try:
            while True:
                events.append(self.receive())
        except socket.timeout:
            pass
        kinds = [e[0] for e in events]
        self.assertEqual(kinds[:2], ["init_begin", "init_ok"], kinds)
        steps = [tuple(map(int, e[4].split())) for e in events if e[0] == "step"]
        self.assertTrue(2 <= len(steps) <= 10, steps)  # first step, after the long gap, ...
        self.assertEqual(steps[0][0], 1)
        # 300 optimizer steps (the first DDP forward counts once before any optimizer step):
        # the last report is at most 300 + 1; the 1.5 s gap is seen.
        self.assertLessEqual(steps[-1][0], 301)
        self.assertTrue(any(gap >= 1400 for _, gap, _, _ in steps), steps)
        # Each report after the first: the wall time it covers and the time waited inside the
        # all-reduce, never more than that time.
        self.assertEqual(steps[0][2:], (0, 0))
        self.assertTrue(all(span > 0 and 0 <= waited <= span for _, _, span, waited in steps[1:]), steps)
        self.assertEqual(kinds[-2:], ["section_begin", "section_end"], kinds)
        self.assertEqual(events[-1][4], "checkpoint")

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_pause_longer_than_the_launcher_timeout_between_collectives_succeeds(self):
        # A rank-0 evaluation or checkpoint that makes the others wait longer than the init
        # deadline must not fail: two real processes, rank 1 pauses 12 s under a 5 s
        # DDPLAUNCH_TIMEOUT_S between two all_reduces.
        code = textwrap.dedent("""
            import os, time, torch, torch.distributed as dist
            dist.init_process_group("gloo")
            rank = dist.get_rank()
            t = torch.ones(1)
            dist.all_reduce(t)
            if rank == 1:
                time.sleep(12)
            started = time.monotonic()
            dist.all_reduce(t)
            print("rank", rank, "sum", int(t.item()), "waited", int(time.monotonic() - started))
            dist.destroy_process_group()
            """)
        port = str(free_port())
        procs = []
        for rank in range(2):
            env = dict(os.environ, PYTHONPATH=AUTOLOAD_DIR, MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=port, RANK=str(rank), WORLD_SIZE="2",
                       DDPLAUNCH_TIMEOUT_S="5")
            procs.append(subprocess.Popen([sys.executable, "-c", code], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outputs = []
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=100)
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                raise
            outputs.append((proc.returncode, out, err))
        for rank, (code_, out, err) in enumerate(outputs):
            self.assertEqual(code_, 0, "rank %d failed:\n%s" % (rank, err))
        self.assertEqual(outputs[0][1].split()[:4], ["rank", "0", "sum", "4"])
        self.assertGreaterEqual(int(outputs[0][1].split()[5]), 10, "rank 0 did not wait")
        self.assertEqual(outputs[1][1].split()[:4], ["rank", "1", "sum", "4"])
        # Both ranks reported their init through the autoloaded shim.
        events = sorted((e[1], e[0]) for e in (self.receive() for _ in range(4)))
        self.assertEqual(events, [(0, "init_begin"), (0, "init_ok"),
                                  (1, "init_begin"), (1, "init_ok")])


if __name__ == "__main__":
    unittest.main()
