"""Slow setup before init: the ranks named in argv[1] ("all" or a comma list) sleep argv[2]
seconds (dataset download, model build) before init_process_group, then one all_reduce."""
import os
import sys
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
slow = sys.argv[1]
if slow == "all" or str(rank) in slow.split(","):
    time.sleep(float(sys.argv[2]))
dist.init_process_group("gloo")
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"RESULT rank={rank} sum={t.item()}", flush=True)
dist.destroy_process_group()
