"""DDP training for about argv[1] seconds whose output stays in Python's buffer until exit
(started by buffered_wrapper.sh with PYTHONUNBUFFERED unset, stdout a pipe or file)."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

print("loading data ...")  # no flush: sits in the buffer
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
steps = int(float(sys.argv[1]) / 0.1)
for step in range(steps):
    opt.zero_grad()
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    time.sleep(0.1)
print(f"TRAINED rank={rank} steps={steps}")
dist.destroy_process_group()
