"""Tests for worker_shim/python/ddplaunch_wait.py and the step reports' span and wait: which
steps are timed (all of them from 10 ms a step, a random sample of shorter ones), the share of
waiting a sampled report gives (the same as a fully timed one, steps alternating short and long
included), a report without a timed step measuring nothing; and real programs: a known wait
(a collective that takes 3 ms of a 4 ms step) read with sampling on, and two gloo DDP ranks, one
computing longer, with long and with short steps.
Run: /usr/bin/python3 tests/python/ddplaunch_wait_test.py -v
"""

import os
import random
import socket
import subprocess
import sys
import textwrap
import time
import unittest

from ddplaunch_shim_test import AUTOLOAD_DIR, HAVE_TORCH, StatusChannelTest, free_port

import ddplaunch_shim  # noqa: E402  (on sys.path through ddplaunch_shim_test)
import ddplaunch_wait  # noqa: E402

MS = 0.001


def always(value):
    return lambda: value


def drive(wait, steps, step_s, waited_s, start=100.0, counter=None):
    """`steps` steps of step_s seconds each (a list: repeated in turn), each waiting waited_s
    (likewise) inside collectives; returns the end time and the reports the counter made."""
    step_s = step_s if isinstance(step_s, list) else [step_s]
    waited_s = waited_s if isinstance(waited_s, list) else [waited_s]
    now, reports = start, []
    for i in range(steps):
        wait.add(waited_s[i % len(waited_s)])
        now += step_s[i % len(step_s)]
        if counter is None:
            wait.on_step(now)
        else:
            due = counter.on_step(now, wait)
            if due is not None:
                reports.append(due)
    return now, reports


class WhichStepsAreTimedTest(unittest.TestCase):
    def test_steps_of_10_ms_or_more_are_all_timed_whatever_the_draw(self):
        wait = ddplaunch_wait.CollectiveWait(draw=always(0.999))
        drive(wait, 200, 20 * MS, 5 * MS)
        self.assertEqual(wait.timed_steps, 199)  # the first boundary only starts a step
        self.assertTrue(wait.timing)

    def test_short_steps_are_sampled_about_100_a_second(self):
        wait = ddplaunch_wait.CollectiveWait(draw=random.Random(7).random)
        drive(wait, 5000, 1 * MS, 0.2 * MS)  # 5 s of 1 ms steps
        self.assertAlmostEqual(wait.mean_interval, 1 * MS, delta=0.01 * MS)
        self.assertGreater(wait.timed_steps, 350)
        self.assertLess(wait.timed_steps, 700)

    def test_waiting_in_an_untimed_step_is_not_counted(self):
        wait = ddplaunch_wait.CollectiveWait(draw=always(0.999))
        wait.timing = False
        wait.add(0.5)
        self.assertEqual(wait.waited, 0.0)
        wait.timing = True
        wait.add(0.5)
        wait.add(-1.0)
        self.assertEqual(wait.waited, 0.5)


class SampledShareTest(unittest.TestCase):
    def test_sampled_steps_give_the_share_of_waiting(self):
        wait = ddplaunch_wait.CollectiveWait(draw=random.Random(3).random)
        drive(wait, 4000, 1 * MS, 0.25 * MS)
        self.assertLess(wait.timed_steps, 1000)
        self.assertAlmostEqual(wait.take_share(), 0.25, places=6)
        self.assertIsNone(wait.take_share())  # taken: nothing since

    def test_steps_alternating_short_and_long_are_not_timed_on_one_kind_only(self):
        # 0.5 ms steps waiting 0.4 ms, then 1.5 ms steps waiting 0.1 ms: 0.5 of 2 ms is waiting.
        wait = ddplaunch_wait.CollectiveWait(draw=random.Random(11).random)
        drive(wait, 20000, [0.5 * MS, 1.5 * MS], [0.4 * MS, 0.1 * MS])
        self.assertAlmostEqual(wait.take_share(), 0.25, delta=0.03)

    def test_a_step_never_waits_more_than_its_wall_time(self):
        wait = ddplaunch_wait.CollectiveWait(draw=always(0.0))
        drive(wait, 10, 20 * MS, 30 * MS)
        self.assertEqual(wait.take_share(), 1.0)


class StepReportTest(unittest.TestCase):
    def test_a_sampled_report_carries_its_whole_span_and_the_waited_share_of_it(self):
        wait = ddplaunch_wait.CollectiveWait(draw=random.Random(5).random)
        counter = ddplaunch_shim._StepCounter()
        _, reports = drive(wait, 3500, 1 * MS, 0.25 * MS, counter=counter)
        self.assertEqual(reports[0], (1, 0, 0, 0))
        self.assertEqual(len(reports), 4)  # the first step, then once a second
        for steps, max_ms, span_ms, wait_ms in reports[1:]:
            self.assertAlmostEqual(span_ms, 1000, delta=2)
            self.assertAlmostEqual(wait_ms, span_ms // 4, delta=1)
        self.assertLess(wait.timed_steps, 3500 // 3)

    def test_a_report_without_a_timed_step_measures_nothing(self):
        # After the first steps (timed while the mean step time is not yet learnt), a draw that
        # never picks a 1 ms step leaves later reports without a timed step: span 0, wait 0.
        wait = ddplaunch_wait.CollectiveWait(draw=always(0.999))
        counter = ddplaunch_shim._StepCounter()
        _, reports = drive(wait, 2500, 1 * MS, 0.25 * MS, counter=counter)
        self.assertGreater(reports[1][2], 0)
        self.assertEqual(reports[-1][2:], (0, 0))

    def test_without_a_wait_module_nothing_is_measured(self):
        counter = ddplaunch_shim._StepCounter()
        reports = [counter.on_step(100.0 + i * 0.5) for i in range(5)]
        self.assertEqual([r[2:] for r in reports if r is not None], [(0, 0), (0, 0), (0, 0)])


class RanksTest(StatusChannelTest):
    """Real programs with the shim autoloaded, as ddplaunch runs workers; their step reports
    are read from the status socket."""

    def run_ranks(self, code, world, args=()):
        """Runs `code` (with `args` in sys.argv) as `world` gloo ranks; returns each rank's step
        reports (after the first, which measures nothing) and its stdout."""
        port = str(free_port())
        procs = []
        for rank in range(world):
            env = dict(os.environ, PYTHONPATH=AUTOLOAD_DIR, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                       RANK=str(rank), WORLD_SIZE=str(world), DDPLAUNCH_STATUS_SOCKET=self.path,
                       OMP_NUM_THREADS="1")
            procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        reports = {rank: [] for rank in range(world)}
        self.sock.settimeout(1)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            try:
                event = self.receive()
            except socket.timeout:
                continue
            if event[0] == "step":
                reports[event[1]].append(tuple(map(int, event[4].split())))
        outputs = []
        for proc in procs:
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                raise
            self.assertEqual(proc.returncode, 0, err)
            outputs.append(out)
        return {rank: r[1:] for rank, r in reports.items()}, outputs

    def waited_share(self, reports):
        self.assertGreaterEqual(len(reports), 2, reports)
        span = sum(r[2] for r in reports)
        self.assertGreater(span, 0, reports)
        return sum(r[3] for r in reports) / span

    def timed_of_counted(self, output):
        """(steps timed, steps counted) as the program printed them at its end."""
        line = [l for l in output.splitlines() if l.startswith("TIMED ")][-1]
        timed, counted = map(int, line.split()[1:])
        return timed, counted

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_a_known_wait_gives_its_share_with_short_steps_sampled(self):
        # One rank; each 4 ms step computes 1 ms and spends 3 ms in a collective (a stand-in
        # all_reduce, set before init so that the shim wraps it as it wraps torch's). Steps are
        # sampled (all timed from 100 ms here, so that a loaded machine's longer steps are
        # sampled too): fewer are timed than counted, and the share is still 3/4.
        reports, outputs = self.run_ranks("""
            import time, torch, torch.distributed as dist
            def busy(seconds):
                until = time.monotonic() + seconds
                while time.monotonic() < until:
                    pass
            dist.all_reduce = lambda tensor, *args, **kwargs: busy(0.003)
            dist.init_process_group("gloo")
            import ddplaunch_wait  # loaded by the shim at init
            ddplaunch_wait.EVERY_STEP_FROM = 0.1  # steps sampled however much a loaded machine slows them
            model = torch.nn.Linear(4, 4)
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for _ in range(900):
                busy(0.001)
                dist.all_reduce(torch.ones(1))
                opt.step()
            import ddplaunch_shim
            print("TIMED", ddplaunch_shim._wait[0].timed_steps, ddplaunch_shim._counter.steps)
            dist.destroy_process_group()
            """, 1)
        timed, counted = self.timed_of_counted(outputs[0])
        self.assertEqual(counted, 901)  # the first collective, then each optimizer step
        self.assertLess(timed, 0.5 * counted)
        self.assertGreater(timed, 0)
        self.assertAlmostEqual(self.waited_share(reports[0]), 0.75, delta=0.1)

    # Two real gloo DDP ranks; rank 1 computes `extra` seconds more per step (a busy loop, as a
    # starved CPU would). Rank 0 spends most of its time waiting inside DDP's all-reduce, rank
    # 1 little; a program's own all_reduce counts as waiting too.
    TWO_RANKS = """
        import sys, time, torch, torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        steps, extra, every_step_from = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
        dist.init_process_group("gloo")
        import ddplaunch_wait  # loaded by the shim at init
        ddplaunch_wait.EVERY_STEP_FROM = every_step_from
        rank = dist.get_rank()
        model = DDP(torch.nn.Linear(64, 64))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(steps):
            opt.zero_grad()
            model(torch.randn(8, 64)).sum().backward()
            if rank == 1:
                busy_until = time.monotonic() + extra
                while time.monotonic() < busy_until:
                    pass
            opt.step()
        t = torch.ones(1)
        dist.all_reduce(t)
        import ddplaunch_shim
        print("TIMED", ddplaunch_shim._wait[0].timed_steps, ddplaunch_shim._counter.steps)
        dist.destroy_process_group()
        """

    def run_two_ranks(self, steps, extra, every_step_from):
        return self.run_ranks(self.TWO_RANKS, 2, args=(str(steps), str(extra), str(every_step_from)))

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_the_rank_that_computes_longer_is_the_one_the_other_waits_for(self):
        # 30 ms more a step: every step is timed.
        reports, outputs = self.run_two_ranks(100, 0.03, 0.010)
        self.assertGreater(self.waited_share(reports[0]), 0.5, reports)
        self.assertLess(self.waited_share(reports[1]), 0.3, reports)
        for output in outputs:
            timed, counted = self.timed_of_counted(output)
            # All but the first few: the first boundary only starts a step, and the first
            # interval (the first forward to the first optimizer step) is short.
            self.assertGreaterEqual(timed, counted - 5)

    @unittest.skipUnless(HAVE_TORCH, "torch.distributed is not available")
    def test_with_short_steps_sampled_the_slower_rank_is_still_the_one_waited_for(self):
        # 2 ms more a step: steps of about 2.5 ms, a sample of them timed (all from 100 ms here,
        # so that a loaded machine's longer steps are sampled too). The all-reduce's own
        # time is a larger part of so short a step, so the ranks are compared as the launcher's
        # straggler watch compares them: rank 1's compute share is above 1.3 times rank 0's,
        # and 10 % of the wall time above it.
        reports, outputs = self.run_two_ranks(1500, 0.002, 0.1)
        compute = [1 - self.waited_share(reports[rank]) for rank in (0, 1)]
        self.assertGreater(compute[1], 1.3 * compute[0], reports)
        self.assertGreater(compute[1] - compute[0], 0.1, reports)
        for output in outputs:
            timed, counted = self.timed_of_counted(output)
            self.assertLess(timed, 0.5 * counted)


if __name__ == "__main__":
    unittest.main()
