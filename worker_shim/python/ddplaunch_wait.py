"""How long a rank waits inside collectives, for the launcher's straggler watch.

A slow rank (a starved CPU, a throttled host, a slower disk for its shard) is invisible in the
step rate: every rank steps at the pace of the slowest. What differs is where the time goes:
the slow rank computes while the others wait inside the collectives for it. This module gives,
at each step report of ddplaunch_shim, the share of the time since the previous report spent
waiting; the shim sends it as the wall time those steps covered and the waiting in it, so the
launcher reads per rank compute = span - wait.

What is measured, with host clocks (the CPU path; CUDA below):
- DistributedDataParallel: the gradient all-reduce runs in buckets while backward still
  computes, and backward returns only once the last bucket's all-reduce is done. A rank waits
  from the end of its own backward computation to that return. The end of the computation is
  an autograd engine callback queued when backward reaches the model's output (a hook on the
  output tensor, set at the forward): it runs once the graph is computed, before DDP's own
  callback that waits for the all-reduce. The return is timed around torch.autograd.backward.
  Nothing of DDP is replaced or registered with it (no communication hook).
- A synchronous torch.distributed collective called by the program: the time inside the call
  (ddplaunch_shim's collective wrapper adds it).

On CUDA (the design for the GPU check; not built yet): host clocks time kernel launches, not
kernels, and DDP's wait for the all-reduce is a stream wait, not a host block, so backward
returns before the gradients are reduced and the host's wait shows up later, wherever the
program first synchronizes. The same two points are read with CUDA events instead:
- at the callback (end of the backward graph), record an event A (enable_timing) on the
  current stream: it completes when the backward kernels queued before it are done;
- after torch.autograd.backward returns, record an event B on the current stream: DDP made
  that stream wait for the all-reduce's stream, so B completes when the reduced gradients are
  ready. wait = A.elapsed_time(B); the span is the wall time between consecutive B events.
- Events are read lazily, never synchronized: at each report, the timed steps whose B has
  completed (B.query()) are summed, the others carried to the next report; a handful of
  event pairs are pooled and reused, so recording costs two cudaEventRecord calls per timed
  step. A program's own collectives on CUDA are read the same way (an event before and after
  the call on the current stream).
The GPU check (bench/run gpu-check) must show, on two ranks of one GPU each, that a rank
slowed on the GPU (torch.cuda._sleep in its step) is the one named, and that the wait read by
events matches the profiler's NCCL kernel time to within 10 %.

Which steps are timed. Timing a DDP step costs about 15-20 µs of CPU (most of it torch
registering a Python hook on the output at the forward and the engine calling it; then the
callback and the timed backward), 6 % of a 0.3 ms step; a step not timed costs a running mean,
a draw and two checks (under 1 µs alone; BENCHMARKS.md has the figures in a training loop). So
a step is timed with probability mean step interval / EVERY_STEP_FROM: every step when steps
take 10 ms or more, else about 100 steps a second (about 2 ms a second spent timing, 0.2 %).
The share of waiting is that of the timed steps, whose wall time is known exactly, and the
report's wait is that share of its span: a sampled report gives the same compute share as a
fully timed one, and some 2000 timed steps fill the launcher's 20 s window. The draw is random
(from a generator of this module's own, so the program's `random` sequence is untouched) and
independent of the step it picks, so a job whose steps alternate short and long is not timed on
its short steps only.

Loaded by ddplaunch_shim (by path, beside it) once init_process_group succeeded; never raises
into the program.
"""

import random
import time

_WRAPPED_MARK = "_ddplaunch_wrapped"

# Steps at least this long (the mean interval) are all timed; shorter ones in proportion.
EVERY_STEP_FROM = 0.010
# Weight of the latest step interval in the running mean that sets the odds (about the last
# 20 steps): a job's step time is learnt within a few dozen steps, and an odd long step (an
# evaluation, a checkpoint) only has the next hundred or so steps all timed.
_MEAN_WEIGHT = 0.05


class CollectiveWait:
    """The waiting of the timed steps since the last take_share(); fed from the program's
    thread (plain float stores under the GIL). Pure apart from the clock reads of the hooks
    below: step boundaries come in as times, and `draw` (a uniform [0, 1) generator) may be
    given for tests."""

    __slots__ = ("timing", "waited", "computed_at", "timed_span", "timed_waited", "timed_steps",
                 "step_began", "mean_interval", "draw", "engine", "computed", "reached")

    def __init__(self, draw=None):
        self.timing = True          # the current step is timed (the first one always)
        self.waited = 0.0           # waiting in the current step (when timed)
        self.computed_at = 0.0      # the current backward's graph computed (0: not in one)
        self.timed_span = 0.0       # wall time of the timed steps since take_share()
        self.timed_waited = 0.0     # their waiting
        self.timed_steps = 0        # steps timed in all (tests and benchmarks read it)
        self.step_began = 0.0       # 0: no step boundary seen yet
        self.mean_interval = EVERY_STEP_FROM  # until learnt: every step timed
        self.draw = draw or random.Random().random
        self.engine = None          # the autograd engine, found at the first timed forward
        # Bound once, not made per step: the engine callback that notes the graph computed, and
        # the output tensor's hook that queues it.
        self.computed = self._computed
        self.reached = self._reached

    def add(self, seconds):
        """Waiting inside a collective; counted when the current step is timed."""
        if self.timing and seconds > 0:
            self.waited += seconds

    def on_step(self, now):
        """A step ended at `now` and the next begins: the ended one's wall time and waiting are
        kept when it was timed; whether the next one is timed is drawn."""
        if self.step_began > 0:
            interval = now - self.step_began
            if interval > 0:
                self.mean_interval += (interval - self.mean_interval) * _MEAN_WEIGHT
            if self.timing:
                self.timed_span += max(interval, 0.0)
                self.timed_waited += min(self.waited, max(interval, 0.0))
                self.timed_steps += 1
        self.step_began = now
        self.waited = 0.0
        self.timing = self.mean_interval >= EVERY_STEP_FROM or \
            self.draw() * EVERY_STEP_FROM < self.mean_interval

    def take_share(self):
        """The share of the timed steps' wall time spent waiting since the last call, in
        [0, 1]; None when no step was timed (nothing measured)."""
        span, waited = self.timed_span, self.timed_waited
        self.timed_span = self.timed_waited = 0.0
        if span <= 0:
            return None
        return min(waited / span, 1.0)

    def _computed(self):
        self.computed_at = time.monotonic()

    def _reached(self, grad):
        try:
            self.engine.queue_callback(self.computed)
        except Exception:
            pass


def _first_grad_tensor(output):
    """The first tensor of a model's output that backward will reach (the output itself, or
    one in a tuple, list or dict); None when there is none."""
    if getattr(output, "requires_grad", False) and hasattr(output, "register_hook"):
        return output
    values = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else ()
    for value in values:
        if getattr(value, "requires_grad", False) and hasattr(value, "register_hook"):
            return value
    return None


def mark_output(output, wait):
    """At a DDP forward of a timed step: when backward reaches `output`, queue the callback that
    notes the end of the graph's computation (it runs before DDP's own, queued later, which
    waits for the all-reduce). Nothing when the step is not timed."""
    if not wait.timing:
        return
    tensor = _first_grad_tensor(output)
    if tensor is None:
        return
    try:
        if wait.engine is None:
            from torch.autograd import Variable
            wait.engine = Variable._execution_engine
        tensor.register_hook(wait.reached)
    except Exception:
        pass


def timed_backward(original, wait):
    """torch.autograd.backward, with the time from the graph computed to its return (DDP waiting
    for the last all-reduce) counted as waiting in a timed step."""
    def backward(*args, **kwargs):
        if not wait.timing:
            return original(*args, **kwargs)
        wait.computed_at = 0.0
        try:
            return original(*args, **kwargs)
        finally:
            if wait.computed_at > 0:
                wait.add(time.monotonic() - wait.computed_at)
                wait.computed_at = 0.0
    backward.__wrapped__ = original
    setattr(backward, _WRAPPED_MARK, True)
    return backward


def install_backward_timing(autograd, wait):
    """torch.autograd.backward timed (Tensor.backward calls it through the module)."""
    if not getattr(autograd.backward, _WRAPPED_MARK, False):
        autograd.backward = timed_backward(autograd.backward, wait)
