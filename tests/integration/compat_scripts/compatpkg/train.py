"""Run as `-m compatpkg.train`: one all_reduce, and the module name it ran under."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"RESULT rank={rank} sum={t.item()} module={__spec__.name if __spec__ else None}", flush=True)
dist.destroy_process_group()
