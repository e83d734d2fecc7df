"""init_process_group with an explicit tcp:// init_method on the command line's
--master-port (argv[1]), as older scripts and tutorials write it."""
import os
import sys

import torch
import torch.distributed as dist

port = sys.argv[1]
dist.init_process_group("gloo", init_method=f"tcp://localhost:{port}",
                        rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
rank = dist.get_rank()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"TCP INIT rank={rank} sum={t.item()}", flush=True)
dist.destroy_process_group()
