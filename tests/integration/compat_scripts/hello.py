"""The smallest torchrun job: one all_reduce across every rank."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"HELLO rank={rank} world={world} sum={t.item()}", flush=True)
dist.destroy_process_group()
