"""DDP training of argv[2] steps (argv[3] seconds each) that checkpoints after every step to
argv[1] and resumes from it in a later generation. Prints where it started and the world it
saw, so a test can tell that a replacement node joined the same world size and resumed."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

path, total, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
generation = int(os.environ.get("DDPLAUNCH_GENERATION", "0"))
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
start = 0
if os.path.exists(path):
    state = torch.load(path)
    model.module.load_state_dict(state["model"])
    start = state["step"]
print(f"START rank={rank} world={world} generation={generation} resumed_from={start}", flush=True)
for step in range(start, total):
    opt.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    opt.step()
    time.sleep(pause)
    if rank == 0:
        torch.save({"model": model.module.state_dict(), "step": step + 1}, path + ".tmp")
        os.replace(path + ".tmp", path)
        print(f"STEP {step + 1}", flush=True)
    dist.barrier()
print(f"DONE rank={rank} world={world} generation={generation} resumed_from={start}", flush=True)
dist.destroy_process_group()
