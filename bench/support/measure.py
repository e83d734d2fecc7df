"""Wall time and peak RSS of one launcher process (not its workers), for bench/run overhead.
Wall time: posix_spawn -> exit (pidfd) with no tracing. Peak RSS: the launcher runs under ptrace with
PTRACE_O_TRACEEXIT; at its exit stop (before its memory is freed) VmHWM is read from /proc/PID/status."""
import ctypes
import os
import select
import signal
import time

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long
PTRACE_TRACEME, PTRACE_CONT, PTRACE_SETOPTIONS = 0, 7, 0x4200
PTRACE_O_TRACEEXIT, PTRACE_O_EXITKILL, PTRACE_EVENT_EXIT = 0x40, 0x100000, 6


def wall(argv, env=None, timeout_s=120.0):
    """Returns (seconds from spawn to exit, exit status, wait4 ru_maxrss KiB). The exit is
    waited for on a pidfd (poll wakes at the exit itself), not by polling wait4 with sleeps,
    whose interval (~0.5 ms) was added to every row."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env if env is not None else os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
    pidfd = os.pidfd_open(pid)
    try:
        waiter = select.poll()
        waiter.register(pidfd, select.POLLIN)
        if not waiter.poll(int(timeout_s * 1000)):
            os.kill(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            raise RuntimeError(f"{argv[0]} did not finish within {timeout_s} s")
        _, status, ru = os.wait4(pid, 0)
        return time.perf_counter() - t0, os.waitstatus_to_exitcode(status), ru.ru_maxrss
    finally:
        os.close(pidfd)


def _vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def peak_rss(argv, env=None):
    """Returns (launcher's own VmHWM at exit in KiB, wait4 ru_maxrss KiB, exit status)."""
    env = env if env is not None else dict(os.environ)
    pid = os.fork()
    if pid == 0:  # child: be traced, silence output, exec the launcher
        try:
            _libc.ptrace(PTRACE_TRACEME, 0, None, None)
            null = os.open("/dev/null", os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)  # stopped by SIGTRAP at exec
    if not os.WIFSTOPPED(status):
        raise RuntimeError(f"could not trace {argv[0]} (status {status})")
    _libc.ptrace(PTRACE_SETOPTIONS, pid, None, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
    _libc.ptrace(PTRACE_CONT, pid, None, None)
    hwm = -1
    deadline = time.monotonic() + 120
    while True:
        wpid, status, ru = os.wait4(pid, 0)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            return hwm, ru.ru_maxrss, os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
        sig, event = os.WSTOPSIG(status), status >> 16
        if event == PTRACE_EVENT_EXIT:
            hwm = _vm_hwm_kib(pid)
            sig = 0
        elif sig == signal.SIGTRAP:
            sig = 0
        _libc.ptrace(PTRACE_CONT, pid, None, sig)
