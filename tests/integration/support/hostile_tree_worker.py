#!/usr/bin/python3
# The hostile worker of hostile_process_tree_test and slurm_job_test.
# "fds": prints its descriptors and those of an exec'd grandchild that escapes into its own
# session. "escape AFTER": starts four escapees — setsid, setpgid, a double-forked daemon,
# and a double-forked `env -i sleep` with no job tag — prints their pids, then AFTER: exit0,
# hang, or fail_gen0 (exit 1 in generation 0, hang later). "limits": prints RLIMIT_NOFILE.
# Every sleep is bounded (600 s).
import os, subprocess, sys, time

def fds():
    # The descriptors this process got from whoever started it. Not counted: the file the
    # ddplaunch Python shim opens in this very process for faulthandler's stack dumps
    # (stack-<own pid>.txt, close-on-exec): it is the process's own, not inherited. Nor, when
    # ddplaunch's stdin is at end of file, the worker's stdin pipe the shim moved off fd 0 to
    # keep as pdb's keyboard (close-on-exec): it is what the worker got as fd 0.
    own_stack_file = 'stack-%d.txt' % os.getpid()
    shim = sys.modules.get('ddplaunch_shim')
    keyboard = shim._keyboard[0].fileno() if shim and getattr(shim, '_keyboard', None) else -1
    out = []
    for name in os.listdir('/proc/self/fd'):
        try:
            target = os.readlink('/proc/self/fd/' + name)  # the listing's own descriptor is gone by now
            if not target.endswith('/' + own_stack_file) and int(name) != keyboard:
                out.append(int(name))
        except OSError:
            pass
    return ','.join(str(fd) for fd in sorted(out))

def say(text):
    sys.stdout.write(text + '\n')
    sys.stdout.flush()

def sleep_forever():
    for _ in range(600):
        time.sleep(1)
    os._exit(0)

def fork_escapee(how):
    pid = os.fork()
    if pid == 0:
        if how == 'setsid':
            os.setsid()
        else:
            os.setpgid(0, 0)
        sleep_forever()
    return pid

def double_fork(argv=None):
    r, w = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(r)
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.setsid()
            if argv:
                os.execve(argv[0], argv, {})
            sleep_forever()
        os.write(w, str(pid).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(middle, 0)
    pid = int(os.read(r, 32).decode())
    os.close(r)
    return pid

mode = sys.argv[1]
if mode == 'grandchild':
    say('GRANDCHILD_FDS=' + fds())
    sleep_forever()
if mode == 'fds':
    say('WORKER_FDS=' + fds())
    child = subprocess.Popen([sys.executable, sys.argv[0], 'grandchild'], close_fds=False, start_new_session=True)
    say('ESCAPED_PID=%d' % child.pid)
    for _ in range(100):
        time.sleep(0.05)  # let it print before the worker ends
    sys.exit(0)
if mode == 'escape':
    status_dir = os.path.dirname(os.environ.get('DDPLAUNCH_STATUS_SOCKET', ''))
    say('STATUS_DIR=' + status_dir)
    say('ESCAPED_PID=%d' % fork_escapee('setsid'))
    say('ESCAPED_PID=%d' % fork_escapee('setpgid'))
    say('ESCAPED_PID=%d' % double_fork())
    say('UNTAGGED_PID=%d' % double_fork(['/usr/bin/env', '-i', '/bin/sleep', '600']))
    say('ESCAPEES_READY gen=' + os.environ.get('DDPLAUNCH_GENERATION', '?'))
    after = sys.argv[2]
    if after == 'exit0':
        sys.exit(0)
    if after == 'fail_gen0' and os.environ.get('DDPLAUNCH_GENERATION') == '0':
        sys.exit(1)
    sleep_forever()
if mode == 'limits':
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    say('NOFILE soft=%d hard=%d' % (soft, hard))
