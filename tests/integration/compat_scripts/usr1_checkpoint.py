"""Slurm's checkpoint-before-preemption pattern (#SBATCH --signal=USR1@120): on SIGUSR1 the
trainer saves and exits 0. Prints READY when its handler is in place; exits 3 if no signal
came within 60 s."""
import os
import signal
import sys
import time

stop = False


def on_usr1(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGUSR1, on_usr1)
print(f"READY rank {os.environ['RANK']}", flush=True)
deadline = time.monotonic() + 60
step = 0
while not stop and time.monotonic() < deadline:
    time.sleep(0.05)
    step += 1
if stop:
    print(f"CHECKPOINT rank {os.environ['RANK']} saved at step {step}, exiting", flush=True)
    sys.exit(0)
sys.exit(3)
