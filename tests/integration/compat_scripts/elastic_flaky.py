"""An elastic job's worker failure: rank 1 dies in its first attempt (a runtime failure,
after init); the restarted group trains. Prints the world it ran in."""
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([1.0])
dist.all_reduce(t)
if rank == 1 and os.environ.get("TORCHELASTIC_RESTART_COUNT") == "0":
    print(f"FAILING rank={rank} world={world}", flush=True)
    sys.exit(7)
dist.all_reduce(t)
print(f"ELASTIC DONE rank={rank} world={world} restart={os.environ.get('TORCHELASTIC_RESTART_COUNT')}", flush=True)
dist.destroy_process_group()
