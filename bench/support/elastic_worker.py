"""A gloo worker for bench/run membership: marks its process start and its finished
init_process_group (wall clock, restart count, rank, world size) in DIR/<pid>, then all-reduces
forever, so that a lost peer makes it fail as real DDP training would."""
import os
import sys
import time

out = sys.argv[1]


def mark(what):
    with open(os.path.join(out, str(os.getpid())), "a") as f:
        f.write(f"{time.time():.6f} {what} {os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')} "
                f"{os.environ.get('RANK')} {os.environ.get('WORLD_SIZE')}\n")


mark("start")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
mark("init")
t = torch.zeros(1)
while True:
    dist.all_reduce(t)
    time.sleep(0.05)
