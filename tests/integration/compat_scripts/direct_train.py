#!/usr/bin/python3
"""Run directly through its shebang (--no_python): DDP training for about argv[1] seconds.
Prints whether the ddplaunch Python shim was loaded into this interpreter."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"SHIM_LOADED rank={rank} {'ddplaunch_shim' in sys.modules}", flush=True)
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
steps = int(float(sys.argv[1]) / 0.1)
for step in range(steps):
    opt.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    opt.step()
    time.sleep(0.1)
print(f"TRAINED rank={rank} steps={steps}", flush=True)
dist.destroy_process_group()
