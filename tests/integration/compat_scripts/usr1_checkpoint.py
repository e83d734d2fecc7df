"""Slurm's checkpoint-before-preemption pattern (#SBATCH --signal=USR1@120): on SIGUSR1 the
trainer saves and exits 0. Prints READY when its handler is in place; exits 3 if no signal
came within 60 s. With a directory argument, the checkpoint is a file there: rank<R>.ckpt.
A second SIGUSR1 (Slurm signals every process of a step, and ddplaunch forwards its own
copy) changes nothing."""
import os
import signal
import sys
import time

stop = False


def on_usr1(signum, frame):
    global stop
    stop = True
    # The second copy may come after this program has begun to exit, when Python has already put
    # back the default action (death by SIGUSR1): from the first copy on, ignore it.
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)


signal.signal(signal.SIGUSR1, on_usr1)
print(f"READY rank {os.environ['RANK']}", flush=True)
deadline = time.monotonic() + 60
step = 0
while not stop and time.monotonic() < deadline:
    time.sleep(0.05)
    step += 1
if stop:
    if len(sys.argv) > 1:
        with open(os.path.join(sys.argv[1], f"rank{os.environ['RANK']}.ckpt"), "w") as f:
            f.write(f"step={step}\n")
    print(f"CHECKPOINT rank {os.environ['RANK']} saved at step {step}, exiting", flush=True)
    sys.exit(0)
sys.exit(3)
