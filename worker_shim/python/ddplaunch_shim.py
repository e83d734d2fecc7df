"""The worker side of ddplaunch for Python trainers: report init progress to the launcher,
without changing the training script.

report(event, detail) sends one status datagram ("DDPL1 <event> <rank> <generation> <pid>
<detail>", see worker_shim/include/ddplaunch/contract.h) to $DDPLAUNCH_STATUS_SOCKET.
install() wraps torch.distributed.init_process_group (now, or when torch.distributed is
first imported) to report init_begin / init_ok / init_failed. It passes every argument
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

__all__ = ["report", "install", "EVENTS", "MAX_STATUS_BYTES"]

EVENTS = ("init_begin", "init_ok", "init_failed", "heartbeat")
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


def _wrap(original):
    if getattr(original, _WRAPPED_MARK, False):
        return original

    def init_process_group(*args, **kwargs):
        backend = kwargs.get("backend", args[0] if args else "")
        report("init_begin", str(backend or ""))
        try:
            result = original(*args, **kwargs)
        except BaseException as error:
            report("init_failed", "%s: %s" % (type(error).__name__, error))
            raise
        report("init_ok", str(backend or ""))
        return result

    # functools.wraps without importing functools (collections: ~3 ms at start-up).
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(init_process_group, name, getattr(original, name))
        except AttributeError:
            pass
    init_process_group.__dict__.update(getattr(original, "__dict__", {}))
    init_process_group.__wrapped__ = original
    setattr(init_process_group, _WRAPPED_MARK, True)
    return init_process_group


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


def install():
    """Wraps torch.distributed.init_process_group now if torch.distributed is loaded, else on
    its first import. Idempotent. Returns True when the wrapper is (or will be) in place."""
    try:
        dist = sys.modules.get("torch.distributed")
        if dist is not None:
            return _patch(dist)
        if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _PatchOnImport())
        return True
    except Exception:
        return False
