"""How long a rank waits inside collectives, for the launcher's straggler watch.

A slow rank (a starved CPU, a throttled host, a slower disk for its shard) is invisible in the
step rate: every rank steps at the pace of the slowest. What differs is where the time goes:
the slow rank computes while the others wait inside the collectives for it. This module keeps
the seconds of waiting since the last step report; ddplaunch_shim sends them with each "step"
report, beside the wall time those steps covered, so the launcher reads per rank
compute = span - wait.

What is measured, with host clocks (the CPU path; on CUDA the same points would be read with
events recorded on the stream, since a host clock there times the launch, not the kernel):
- DistributedDataParallel: the gradient all-reduce runs in buckets while backward still
  computes, and backward returns only once the last bucket's all-reduce is done. A rank waits
  from the end of its own backward computation to that return. The end of the computation is
  an autograd engine callback queued when backward reaches the model's output (a hook on the
  output tensor, set at each forward): it runs once the graph is computed, before DDP's own
  callback that waits for the all-reduce. The return is timed around torch.autograd.backward.
  Nothing of DDP is replaced or registered with it (no communication hook).
- A synchronous torch.distributed collective called by the program: the time inside the call
  (ddplaunch_shim's collective wrapper adds it).

Loaded by ddplaunch_shim (by path, beside it) once init_process_group succeeded; never raises
into the program.
"""

import time

_WRAPPED_MARK = "_ddplaunch_wrapped"


class CollectiveWait:
    """Seconds of waiting since the last take(); fed from the program's thread (plain float
    stores under the GIL)."""

    __slots__ = ("waited", "computed_at")

    def __init__(self):
        self.waited = 0.0
        self.computed_at = 0.0  # the current backward's graph computed (0: not in one)

    def add(self, seconds):
        if seconds > 0:
            self.waited += seconds

    def take(self):
        waited, self.waited = self.waited, 0.0
        return waited


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
    """At a DDP forward: when backward reaches `output`, queue the callback that notes the end of
    the graph's computation (it runs before DDP's own, queued later, which waits for the
    all-reduce)."""
    tensor = _first_grad_tensor(output)
    if tensor is None:
        return
    try:
        from torch.autograd import Variable
        engine = Variable._execution_engine

        def computed():
            wait.computed_at = time.monotonic()

        def reached(grad):
            try:
                engine.queue_callback(computed)
            except Exception:
                pass
        tensor.register_hook(reached)
    except Exception:
        pass


def timed_backward(original, wait):
    """torch.autograd.backward, with the time from the graph computed to its return (DDP waiting
    for the last all-reduce) counted as waiting."""
    def backward(*args, **kwargs):
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
