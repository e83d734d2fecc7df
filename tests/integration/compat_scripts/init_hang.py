"""Every rank enters init_process_group, but in the first run (generation / restart count 0)
rank 1 looks for the store on argv[1], where nobody listens: both ranks hang in init until
PyTorch's timeout of 15 s. A launcher with its own init deadline restarts them sooner."""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

run = int(os.environ.get("DDPLAUNCH_GENERATION", os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
rank = int(os.environ["RANK"])
if rank == 1 and run == 0:
    os.environ["MASTER_PORT"] = sys.argv[1]
began = time.monotonic()
try:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=15))
except Exception:
    print(f"INIT TIMED OUT rank={rank} run={run} after {time.monotonic() - began:.1f} s", flush=True)
    raise
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"RESULT rank={rank} run={run} sum={t.item()}", flush=True)
dist.destroy_process_group()
