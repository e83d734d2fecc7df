"""The worker side of ddplaunch for Python trainers: report init progress to the launcher,
without changing the training script.

report(event, detail) sends one status datagram ("DDPL1 <event> <rank> <generation> <pid>
<detail>", see worker_shim/include/ddplaunch/contract.h) to $DDPLAUNCH_STATUS_SOCKET.
install() wraps torch.distributed.init_process_group (now, or when torch.distributed is
first imported) to report init_begin / init_ok / init_failed, and once init succeeded hooks
the optimizers' step(), DistributedDataParallel's forward() and the torch.distributed
collectives to report progress ("step", about once a second) for the launcher's hang
detection; section("checkpoint") marks a long planned pause. It passes every argument
through unchanged: in particular it never sets `timeout`, which in PyTorch bounds the store
wait and every later collective too. The launcher enforces its init deadline itself
($DDPLAUNCH_TIMEOUT_S is for the program's information only).
Importing this module does not import torch.
"""

# Only modules Python has loaded at start-up anyway: the autoload runs in every worker, so
# importing this must cost well under a millisecond (importlib.abc alone pulls in
# importlib.resources, pathlib and tempfile: ~20 ms). socket is imported on first report().
import os
import sys
import time  # built into the interpreter: no file to load

__all__ = ["report", "install", "install_post_mortem", "step", "section", "register_stack_dump", "store_init_method", "EVENTS",
           "MAX_STATUS_BYTES"]

EVENTS = ("init_begin", "init_ok", "init_failed", "heartbeat", "step", "section_begin", "section_end")
MAX_STATUS_BYTES = 4096  # contract::kMaxStatusBytes
_MAGIC = "DDPL1"
_WRAPPED_MARK = "_ddplaunch_wrapped"


def _env_int(name, default=None):
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        return None


def format_status(event, rank, generation, pid, detail=""):
    """The status line as bytes, newlines folded to " | ", at most MAX_STATUS_BYTES."""
    detail = str(detail).replace("\r", "").replace("\n", " | ")
    line = "%s %s %d %d %d %s" % (_MAGIC, event, rank, generation, pid, detail)
    return line.encode("utf-8", "replace")[:MAX_STATUS_BYTES]


def report(event, detail=""):
    """Sends one status datagram; returns True when it was sent.

    Does nothing (returns False) when DDPLAUNCH_STATUS_SOCKET or RANK is unset or invalid,
    or the launcher's socket is gone or full. Never raises, never blocks.
    """
    try:
        if event not in EVENTS:
            return False
        path = os.environ.get("DDPLAUNCH_STATUS_SOCKET")
        rank = _env_int("RANK")
        generation = _env_int("DDPLAUNCH_GENERATION", 0)
        if not path or rank is None or rank < 0 or generation is None or generation < 0:
            return False
        data = format_status(event, rank, generation, os.getpid(), detail)
        import socket
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            sock.sendto(data, path)
        return True
    except Exception:  # the launcher being gone must never break training
        return False


def _wraps(wrapper, original):
    """functools.wraps without importing functools (collections: ~3 ms at start-up), plus the
    mark that says "ours": wrapping twice is then a no-op."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, name, getattr(original, name))
        except AttributeError:
            pass
    wrapper.__dict__.update(getattr(original, "__dict__", {}))
    wrapper.__wrapped__ = original
    setattr(wrapper, _WRAPPED_MARK, True)
    return wrapper


class _StepCounter:
    """Counts every step (a clock read and a few adds); a report is due on the first step and
    then at most once per `every` seconds, with the longest gap since the previous report, the
    wall time since that report and the part of it spent waiting inside collectives (the
    launcher's straggler watch: compute = span - wait). The same rule as
    worker_shim/include/ddplaunch/step_counter.h; the waiting comes from the steps the wait
    module timed (ddplaunch_wait.CollectiveWait: all of them, or a sample of short ones), as
    their share of the span."""

    __slots__ = ("every", "steps", "max_ms", "last_step", "last_report")

    def __init__(self, every=1.0):
        self.every = every
        self.steps = 0
        self.max_ms = 0
        self.last_step = 0.0
        self.last_report = 0.0

    def on_step(self, now, wait=None):
        """Returns (steps, max_interval_ms, span_ms, wait_ms) when a report is due, else None;
        `wait`: the CollectiveWait that times the steps (None: no waiting measured). A report
        whose steps were none of them timed carries span 0 and wait 0: nothing measured, which
        the launcher skips."""
        self.steps += 1
        if wait is not None:
            wait.on_step(now)
        if self.steps > 1:
            gap = int((now - self.last_step) * 1000)
            if gap > self.max_ms:
                self.max_ms = gap
        self.last_step = now
        if self.steps > 1 and now - self.last_report < self.every:
            return None
        share = wait.take_share() if wait is not None else None
        span_ms = int((now - self.last_report) * 1000) if self.steps > 1 and share is not None else 0
        wait_ms = min(int(span_ms * share + 0.5), span_ms) if span_ms > 0 else 0
        self.last_report = now
        due = (self.steps, self.max_ms, span_ms, wait_ms)
        self.max_ms = 0
        return due


_counter = _StepCounter()
# What counts as progress: the coarsest sign a program gives. An optimizer step once one was
# seen; before that a DDP forward; before either, a completed torch.distributed collective
# (a plain all_reduce loop). A finer sign is not counted once a coarser one was seen, so a
# trainer's learnt step interval stays the time between its steps.
_COLLECTIVE, _FORWARD, _OPTIMIZER = 1, 2, 3
_coarsest_seen = [0]
_in_step = [0]             # nested step() calls (a subclass calling super().step()) count once
_in_collective = [0]       # a collective built of others (all_gather_object) counts once
_wait = [None]             # ddplaunch_wait.CollectiveWait once the step hooks are installed


def step():
    """Counts one training step for the launcher's hang detection; reports at most about once
    a second. Called automatically after every optimizer step (and DDP forward when no
    optimizer is seen); call it yourself from a custom loop. Never raises."""
    try:
        due = _counter.on_step(time.monotonic(), _wait[0])
        if due is not None:
            report("step", "%d %d %d %d" % due)
    except Exception:
        pass


class section:
    """`with ddplaunch_shim.section("checkpoint"):` marks a long planned pause, so the launcher
    applies the section's own deadline instead of suspecting a hang."""

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        report("section_begin", self.name)
        return self

    def __exit__(self, *exc_info):
        report("section_end", self.name)
        return False


def _progress(level):
    """One sign of progress of `level`: counted unless a coarser kind was seen already."""
    if level >= _coarsest_seen[0]:
        _coarsest_seen[0] = level
        step()


def _on_optimizer_step():
    _progress(_OPTIMIZER)


# The collectives a program calls through torch.distributed (the module's attribute at call
# time); DDP's own gradient all-reduce runs in C++ and is counted as its forward instead.
_COLLECTIVES = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base",
                "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all",
                "all_to_all_single", "gather", "scatter", "barrier", "send", "recv", "all_gather_object",
                "broadcast_object_list", "gather_object", "scatter_object_list", "monitored_barrier")


def _wrap_collective(original):
    """Counts one progress sign when the collective returned (an async one: when issued), and
    a synchronous one's time inside the call as waiting (in a step the wait module times)."""
    def counted(*args, **kwargs):
        _in_collective[0] += 1
        started = time.monotonic()
        try:
            return original(*args, **kwargs)
        finally:
            _in_collective[0] -= 1
            wait = _wait[0]
            if _in_collective[0] == 0 and wait is not None and not kwargs.get("async_op"):
                wait.add(time.monotonic() - started)
            if _in_collective[0] == 0 and _coarsest_seen[0] <= _COLLECTIVE:
                _progress(_COLLECTIVE)
    return _wraps(counted, original)


def _install_collective_hooks(dist):
    for name in _COLLECTIVES:
        original = getattr(dist, name, None)
        if original is None or getattr(original, _WRAPPED_MARK, False):
            continue
        wrapped = _wrap_collective(original)
        setattr(dist, name, wrapped)
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        if c10d is not None and getattr(c10d, name, None) is original:
            setattr(c10d, name, wrapped)


def _wrap_step(cls):
    """Wraps cls.step (when cls defines it) to count one step per outermost call."""
    original = cls.__dict__.get("step")
    if original is None or getattr(original, _WRAPPED_MARK, False):
        return

    def counted_step(self, *args, **kwargs):
        _in_step[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _in_step[0] -= 1
            if _in_step[0] == 0:
                _on_optimizer_step()

    cls.step = _wraps(counted_step, original)


def _all_subclasses(cls):
    out, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


def _load_beside(name):
    """The module `name`.py beside this file, loaded by path (sys.path stays as it was); None
    when it cannot be loaded: what it measures is then not reported."""
    try:
        module = sys.modules.get(name)
        if module is None:
            import importlib.util
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
        return module
    except Exception:
        return None


def _install_step_hooks():
    """After init_process_group succeeded: count optimizer steps and DDP forwards. torch >= 2.0
    has a global optimizer step hook; older torch gets every Optimizer class's step wrapped
    (the ones defined later too, at their first instance)."""
    if getattr(_install_step_hooks, _WRAPPED_MARK, False):
        return
    setattr(_install_step_hooks, _WRAPPED_MARK, True)
    import torch.optim.optimizer as optimizer_module
    hook = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if hook is not None:
        hook(lambda optimizer, args, kwargs: _on_optimizer_step())
    else:
        base = optimizer_module.Optimizer
        for cls in [base] + _all_subclasses(base):
            _wrap_step(cls)
        original_init = base.__init__

        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            _wrap_step(type(self))

        base.__init__ = __init__
    from torch.nn.parallel import DistributedDataParallel
    wait_module = _load_beside("ddplaunch_wait")
    if wait_module is not None and _wait[0] is None:
        import torch.autograd
        _wait[0] = wait_module.CollectiveWait()
        wait_module.install_backward_timing(torch.autograd, _wait[0])
    original_forward = DistributedDataParallel.forward
    if not getattr(original_forward, _WRAPPED_MARK, False):
        def forward(self, *args, **kwargs):
            if _coarsest_seen[0] <= _FORWARD:
                _progress(_FORWARD)
            output = original_forward(self, *args, **kwargs)
            if _wait[0] is not None:
                wait_module.mark_output(output, _wait[0])
            return output
        DistributedDataParallel.forward = _wraps(forward, original_forward)
    import torch.distributed as dist
    _install_collective_hooks(dist)


def store_init_method(init_method):
    """torchrun's --master-port P names the c10d store's port, so scripts write
    init_method="tcp://HOST:P". Under ddplaunch P is the launchers' rendezvous port
    ($DDPLAUNCH_RENDEZVOUS_PORT) and rank 0 hosts the store on MASTER_ADDR:MASTER_PORT: such an
    init_method is pointed there (query string kept). Anything else is returned unchanged."""
    rendezvous_port = _env_int("DDPLAUNCH_RENDEZVOUS_PORT")
    master_addr = os.environ.get("MASTER_ADDR")
    master_port = _env_int("MASTER_PORT")
    if not isinstance(init_method, str) or not init_method.startswith("tcp://"):
        return init_method
    if not rendezvous_port or not master_addr or not master_port or master_port == rendezvous_port:
        return init_method
    rest = init_method[len("tcp://"):]
    cut = min([i for i in (rest.find("?"), rest.find("/")) if i >= 0] or [len(rest)])
    netloc, tail = rest[:cut], rest[cut:]
    host, sep, port = netloc.rpartition(":")
    if not sep or port != str(rendezvous_port):
        return init_method
    if ":" in master_addr and not master_addr.startswith("["):
        master_addr = "[%s]" % master_addr
    return "tcp://%s:%d%s" % (master_addr, master_port, tail)


def _with_store_init_method(args, kwargs):
    """(args, kwargs) with init_method (keyword or 2nd positional) passed through store_init_method."""
    if "init_method" in kwargs:
        old = kwargs["init_method"]
        kwargs = dict(kwargs, init_method=store_init_method(old))
        new = kwargs["init_method"]
    elif len(args) > 1:
        old = args[1]
        args = (args[0], store_init_method(old)) + tuple(args[2:])
        new = args[1]
    else:
        return args, kwargs
    if new != old:
        sys.stderr.write("ddplaunch: init_method %s names the launcher's rendezvous port (torchrun's --master-port); "
                         "using %s, where rank 0 hosts the c10d store\n" % (old, new))
    return args, kwargs


def _with_debug_timeout(args, kwargs):
    """ddplaunch --debug ($DDPLAUNCH_DEBUG_TIMEOUT_S): a process group the program gave no
    timeout waits that long in its collectives, so the ranks waiting for one a person holds in
    a debugger are not failed by gloo's or NCCL's own timeout meanwhile. Only ever longer than
    PyTorch's default; a timeout the program gave (keyword or third argument) is kept."""
    try:
        seconds = float(os.environ.get("DDPLAUNCH_DEBUG_TIMEOUT_S", ""))
    except ValueError:
        return args, kwargs
    if seconds <= 0 or "timeout" in kwargs or len(args) >= 3:
        return args, kwargs
    from datetime import timedelta  # torch has loaded it already
    kwargs = dict(kwargs)
    kwargs["timeout"] = timedelta(seconds=seconds)
    return args, kwargs


def _wrap(original):
    if getattr(original, _WRAPPED_MARK, False):
        return original

    def init_process_group(*args, **kwargs):
        args, kwargs = _with_store_init_method(args, kwargs)
        args, kwargs = _with_debug_timeout(args, kwargs)
        backend = kwargs.get("backend", args[0] if args else "")
        report("init_begin", str(backend or ""))
        try:
            result = original(*args, **kwargs)
        except BaseException as error:
            report("init_failed", "%s: %s" % (type(error).__name__, error))
            raise
        report("init_ok", str(backend or ""))
        try:
            if os.environ.get("DDPLAUNCH_STATUS_SOCKET"):
                _install_step_hooks()
        except Exception:  # progress reports are a bonus; training goes on without them
            pass
        return result

    return _wraps(init_process_group, original)


def _patch(dist):
    """Replaces init_process_group in torch.distributed and torch.distributed.distributed_c10d."""
    original = getattr(dist, "init_process_group", None)
    if original is None:
        return False
    wrapped = _wrap(original)
    dist.init_process_group = wrapped
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if c10d is not None and getattr(c10d, "init_process_group", None) is original:
        c10d.init_process_group = wrapped
    return True


class _LoaderThatPatches:
    """Runs the real loader of torch.distributed, then patches the fresh module."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            _patch(module)
        except Exception:
            pass

    def __getattr__(self, name):  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _PatchOnImport:
    """Waits for the first import of torch.distributed, so that install() costs nothing for
    programs that never use it (importing torch takes seconds)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch.distributed":
            return None
        _remove_finder()
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _LoaderThatPatches(spec.loader)
                return spec
        return None


def _remove_finder():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PatchOnImport)]


_stack_file = []  # the open file faulthandler writes to (kept alive: it must not be closed)


def register_stack_dump():
    """Registers faulthandler on $DDPLAUNCH_STACK_SIGNAL, writing every thread's Python frames
    to $DDPLAUNCH_STACK_DIR/stack-<pid>.txt, so the launcher can show where this rank is stuck
    (ddplaunch stacks, hang reports). The file is created here: the launcher signals only a
    process whose file exists. Idempotent per process (a forked child registers its own).
    Returns True when registered."""
    try:
        directory = os.environ.get("DDPLAUNCH_STACK_DIR")
        signum = _env_int("DDPLAUNCH_STACK_SIGNAL")
        if not directory or not signum or signum <= 0:
            return False
        pid = os.getpid()
        if _stack_file and _stack_file[0][0] == pid:
            return True
        import faulthandler  # built into the interpreter: no file to load
        stream = open(os.path.join(directory, "stack-%d.txt" % pid), "w")
        faulthandler.register(signum, file=stream, all_threads=True, chain=False)
        _stack_file[:] = [(pid, stream)]
        import atexit
        atexit.register(_ignore_stack_signal_at_exit, signum, pid)
        return True
    except Exception:
        return False


def _ignore_stack_signal_at_exit(signum, pid):
    """The interpreter unregisters faulthandler as it finalizes, which would leave the stack
    signal's default action (the end of this rank) while it shuts down: from the last atexit
    call on, the signal is ignored instead."""
    if os.getpid() != pid:
        return
    try:
        import faulthandler
        import signal
        faulthandler.unregister(signum)
        signal.signal(signum, signal.SIG_IGN)
    except Exception:
        pass


_keyboard = []  # pdb's own file on the launcher's pipe, once this process needs one


def _keyboard_file():
    """The launcher's pipe as pdb's keyboard where sys.stdin no longer reads it: under
    $DDPLAUNCH_STDIN_AT_EOF (the pipe moved off fd 0), or in a child process whose sys.stdin
    multiprocessing replaced with /dev/null (a DataLoader worker: fd 0 is still the pipe).
    None where pdb's default, sys.stdin, is the pipe itself."""
    if _keyboard:
        return _keyboard[0]
    try:
        if sys.stdin is not None and not sys.stdin.closed and sys.stdin.fileno() == 0:
            return None
        if (os.fstat(0).st_mode & 0o170000) != 0o010000:  # fd 0 is no pipe: not the launcher's
            return None
        _keyboard.append(open(os.dup(0), "r"))
    except (OSError, ValueError, AttributeError):
        return None
    return _keyboard[0]


def _debugger():
    """A pdb that reads the launcher's pipe (pdb.Pdb() where sys.stdin is that pipe)."""
    import pdb

    keyboard = _keyboard_file()
    return pdb.Pdb(stdin=keyboard, stdout=sys.stdout) if keyboard is not None else pdb.Pdb()


def install_breakpoint_hook():
    """breakpoint() stops at the launcher's keyboard also where sys.stdin is not it (a
    DataLoader worker, a batch job's rank: see _keyboard_file); elsewhere, and for
    PYTHONBREAKPOINT=0 or another debugger, Python's own hook runs as always. Idempotent."""
    if getattr(sys.breakpointhook, _WRAPPED_MARK, False):
        return False
    previous = sys.breakpointhook

    def breakpoint_at_keyboard(*args, **kwargs):
        plain_pdb = os.environ.get("PYTHONBREAKPOINT", "") in ("", "pdb.set_trace")
        if not plain_pdb:
            return previous(*args, **kwargs)
        # pdb stops in the caller's frame (pdb.set_trace() from here would stop in this hook).
        debugger = _debugger()
        if kwargs.get("header") is not None:
            debugger.message(kwargs["header"])
        debugger.set_trace(sys._getframe(1))

    setattr(breakpoint_at_keyboard, _WRAPPED_MARK, True)
    sys.breakpointhook = breakpoint_at_keyboard
    return True


def install_stdin_at_eof():
    """ddplaunch's own stdin is at end of file ($DDPLAUNCH_STDIN_AT_EOF=1: /dev/null, closed,
    a batch job): the program's stdin becomes /dev/null, so input() raises EOFError at once
    as under torchrun, and so does anything the rank starts. The pipe from the launcher moves
    to a descriptor of pdb's own (not inherited by exec'd programs): breakpoint() and
    --post-mortem stops still wait for `ddplaunch debug`. Idempotent."""
    # The rank's own: a program it starts (its stdin whatever the rank gives it) keeps its stdin.
    if os.environ.pop("DDPLAUNCH_STDIN_AT_EOF", None) != "1" or _keyboard:
        return False
    try:
        if (os.fstat(0).st_mode & 0o170000) != 0o010000:  # not the launcher's pipe
            return False
        keyboard = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        _keyboard.append(open(keyboard, "r"))
    except OSError:
        return False
    return True


POST_MORTEM_MARK = "ddplaunch post-mortem: raised "  # read by the launcher (the stop's reason)


class _PostMortemExpired(Exception):
    """--post-mortem-timeout passed with the rank still in pdb."""


def install_post_mortem():
    """ddplaunch --post-mortem ($DDPLAUNCH_POST_MORTEM_S set): an uncaught exception stops the
    rank in pdb at the raising frame, after its traceback, for at most that many seconds;
    then the rank exits as it would have. pdb is imported only when an exception comes."""
    try:
        limit = float(os.environ.get("DDPLAUNCH_POST_MORTEM_S", ""))
    except ValueError:
        return False
    if limit <= 0 or getattr(sys.excepthook, _WRAPPED_MARK, False):
        return False
    previous = sys.excepthook

    def post_mortem(kind, value, tb):
        previous(kind, value, tb)
        if tb is None or issubclass(kind, (KeyboardInterrupt, SystemExit)):
            return
        import signal

        def expired(signum, frame):
            raise _PostMortemExpired()

        try:
            sys.stderr.flush()
            print(POST_MORTEM_MARK + kind.__name__, flush=True)
            signal.signal(signal.SIGALRM, expired)
            signal.alarm(max(1, int(limit)))
            debugger = _debugger()  # pdb.post_mortem(tb), at the launcher's keyboard
            debugger.reset()
            debugger.interaction(None, tb)
        except _PostMortemExpired:
            print("\nddplaunch post-mortem: %g s passed (--post-mortem-timeout): the rank exits with its exception"
                  % limit, flush=True)
        except Exception:
            pass
        finally:
            signal.alarm(0)

    setattr(post_mortem, _WRAPPED_MARK, True)
    sys.excepthook = post_mortem
    return True


def install():
    """Wraps torch.distributed.init_process_group now if torch.distributed is loaded, else on
    its first import, and registers the stack dump (and the post-mortem hook under
    --post-mortem; breakpoint() at the launcher's keyboard in child processes and when
    ddplaunch's stdin is at end of file). Idempotent.
    Returns True when the wrapper is (or will be) in place."""
    register_stack_dump()
    install_stdin_at_eof()
    install_breakpoint_hook()
    install_post_mortem()
    try:
        dist = sys.modules.get("torch.distributed")
        if dist is not None:
            return _patch(dist)
        if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _PatchOnImport())
        return True
    except Exception:
        return False
