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
  computes; a rank waits from the moment its last bucket is ready (its own backward is done)
  until that bucket's all-reduce completes. The bucket hook DDP calls is timed: the program's
  own hook when it registered one (wrapped at registration), else torch's default all-reduce
  hook, registered at the model's first forward with the model's own process group.
- A synchronous torch.distributed collective called by the program: the time inside the call
  (ddplaunch_shim's collective wrapper adds it).

Loaded by ddplaunch_shim (by path, beside it) once init_process_group succeeded; never raises
into the program.
"""

import time

_WRAPPED_MARK = "_ddplaunch_wrapped"


class CollectiveWait:
    """Seconds of waiting since the last take(); fed from the program's thread and from the
    thread that completes a bucket's all-reduce (plain float and tuple stores under the GIL)."""

    __slots__ = ("waited", "last_ready", "last_done")

    def __init__(self):
        self.waited = 0.0
        self.last_ready = 0.0   # the current backward's last bucket ready
        self.last_done = 0.0    # its all-reduce done

    def add(self, seconds):
        if seconds > 0:
            self.waited += seconds

    def bucket_ready(self, now):
        self.last_ready = now

    def bucket_done(self, now):
        self.last_done = now

    def take(self):
        """The waiting since the last take(): the explicit collectives' time plus, for the
        backward that ended since, its last bucket's wait."""
        if self.last_ready > 0 and self.last_done > self.last_ready:
            self.waited += self.last_done - self.last_ready
            self.last_ready = self.last_done = 0.0
        waited, self.waited = self.waited, 0.0
        return waited


def timed_bucket_hook(hook, wait):
    """`hook` (state, bucket) -> Future, with its bucket's ready and done times kept. The hook's
    own future is what DDP gets: the time is taken by a done-callback beside it (which reads no
    value and raises nothing), so a failed all-reduce reaches DDP exactly as without the shim."""
    def timed(state, bucket):
        wait.bucket_ready(time.monotonic())
        future = hook(state, bucket)
        try:
            future.add_done_callback(lambda _: wait.bucket_done(time.monotonic()))
        except Exception:
            pass
        return future
    timed.__name__ = getattr(hook, "__name__", "hook")
    timed.__qualname__ = getattr(hook, "__qualname__", timed.__name__)
    return timed


def install_ddp_timing(ddp_class, wait):
    """Times DDP's bucket hooks: the program's own hook is wrapped when it registers one; a model
    without one gets torch's default all-reduce hook at its first forward (what DDP does anyway,
    through Python), on the model's own process group."""
    original_register = ddp_class.register_comm_hook
    if getattr(original_register, _WRAPPED_MARK, False):
        return

    def register_comm_hook(self, state, hook):
        self._ddplaunch_hooked = True
        return original_register(self, state, timed_bucket_hook(hook, wait))
    register_comm_hook.__wrapped__ = original_register
    setattr(register_comm_hook, _WRAPPED_MARK, True)
    ddp_class.register_comm_hook = register_comm_hook

    builtin = getattr(ddp_class, "_register_builtin_comm_hook", None)
    if builtin is not None:
        def register_builtin(self, comm_hook_type):
            self._ddplaunch_hooked = True  # a C++ hook: not timed, and nothing of ours to add
            return builtin(self, comm_hook_type)
        ddp_class._register_builtin_comm_hook = register_builtin


def before_first_forward(model, wait):
    """At a DDP model's first forward: the default all-reduce hook, timed, unless the program
    registered a hook of its own. A model DDP refuses a hook for is left as it is."""
    if getattr(model, "_ddplaunch_hooked", False):
        return
    model._ddplaunch_hooked = True
    try:
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(model.process_group, default_hooks.allreduce_hook)
    except Exception:
        pass

