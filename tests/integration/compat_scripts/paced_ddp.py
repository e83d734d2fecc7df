"""A CPU-bound gloo DDP loop for the straggler tests: every rank computes the same work per
step; the run lasts until rank 0 has trained for DDPL_TRAIN_S seconds (or sees the file named
by DDPL_STOP_FILE), agreed by all ranks through an all_reduce every 10 steps, so that every
rank makes the same number of collectives. Prints "TRAINED rank=R steps=N" at the end."""
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
torch.set_num_threads(1)
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
train_s = float(os.environ.get("DDPL_TRAIN_S", "30"))
stop_file = os.environ.get("DDPL_STOP_FILE", "")
started = time.monotonic()
steps = 0
while True:
    for _ in range(10):
        optimizer.zero_grad()
        model(torch.randn(64, 256)).pow(2).mean().backward()
        optimizer.step()
        steps += 1
    stop = torch.zeros(1)
    if rank == 0 and (time.monotonic() - started > train_s or (stop_file and os.path.exists(stop_file))):
        stop += 1
    dist.all_reduce(stop)
    if stop.item() > 0:
        break
print("TRAINED rank=%d steps=%d" % (rank, steps), flush=True)
dist.destroy_process_group()
