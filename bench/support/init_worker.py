"""The worker of bench/run launch-scale: marks its process start (its first line, before any
import) and its finished init_process_group (gloo) in DIR/<pid> — wall clock, restart count,
rank, world size: the lines bench/support/failover_marks.py reads — then waits for the others
in a barrier, leaves the group and exits 0."""
import os
import sys
import time


def mark(what):
    with open(os.path.join(sys.argv[1], str(os.getpid())), "a") as f:
        f.write(f"{time.time():.6f} {what} {os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')} "
                f"{os.environ.get('RANK')} {os.environ.get('WORLD_SIZE')}\n")


mark("start")
import datetime  # noqa: E402

import torch.distributed as dist  # noqa: E402

# Bounded: a peer that never comes fails this rank instead of hanging it (the bench bounds the run too).
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(os.environ.get("LAUNCH_SCALE_INIT_S", "600"))))
mark("init")
dist.barrier()  # nobody leaves (rank 0 holds the store) before every rank is through init
dist.destroy_process_group()
