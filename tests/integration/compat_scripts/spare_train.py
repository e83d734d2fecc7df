"""DDP training of argv[2] steps (argv[3] seconds each) that checkpoints after every step to
argv[1] and resumes from it in a later generation. Prints where it started and the world it
saw, so a test can tell that a replacement node joined the same world size and resumed.
With argv[4], a file: once it exists (rank 0 looks after each step, and every rank agrees in
the step's closing all_reduce), training ends after that step, as at argv[2]: a test that has
seen what it checks (a new generation resumed) need not wait out the remaining steps."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

path, total, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
stop_file = sys.argv[4] if len(sys.argv) > 4 else ""
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
    stop = torch.tensor([1.0 if rank == 0 and stop_file and os.path.exists(stop_file) else 0.0])
    dist.all_reduce(stop)  # the step's barrier, and the ranks' agreement on stopping
    if stop.item() > 0:
        break
print(f"DONE rank={rank} world={world} generation={generation} resumed_from={start}", flush=True)
dist.destroy_process_group()
