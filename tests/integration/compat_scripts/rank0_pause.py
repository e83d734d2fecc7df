"""Rank 0 alone pauses argv[1] seconds between two all_reduces (an evaluation or a checkpoint);
the other ranks wait for it inside the second collective."""
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.tensor([1.0])
dist.all_reduce(t)
if rank == 0:
    time.sleep(float(sys.argv[1]))
dist.all_reduce(t)
print(f"RESULT rank={rank} sum={t.item()}", flush=True)
dist.destroy_process_group()
