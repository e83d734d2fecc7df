"""DDP training of argv[2] steps that checkpoints after every step to argv[1]; rank 1 SIGKILLs
itself at step 5 of the first run only. A restart resumes from the checkpoint."""
import os
import signal
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

path, total = sys.argv[1], int(sys.argv[2])
restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
start = 0
if os.path.exists(path):
    state = torch.load(path)
    model.module.load_state_dict(state["model"])
    start = state["step"]
for step in range(start, total):
    if rank == 1 and step == 5 and restart == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    opt.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    opt.step()
    dist.barrier()
    if rank == 0:
        torch.save({"model": model.module.state_dict(), "step": step + 1}, path + ".tmp")
        os.replace(path + ".tmp", path)
    dist.barrier()
print(f"DONE rank={rank} restart={restart} resumed_from={start} steps={total}", flush=True)
dist.destroy_process_group()
