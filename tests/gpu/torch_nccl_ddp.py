"""A real torch DDP job on NCCL, one rank per GPU, for bench/run gpu-check: init_process_group
("nccl") on the device LOCAL_RANK, 20 DDP steps of a small model, then an all-reduce whose
sum is checked. Prints 'rank R ddp ok ...' on success; exits 1 with the reason otherwise."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DistributedDataParallel(torch.nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(20):
        optimizer.zero_grad()
        model(torch.randn(32, 64, device="cuda")).square().mean().backward()
        optimizer.step()
    total = torch.tensor([rank + 1.0], device="cuda")
    dist.all_reduce(total)
    expected = world * (world + 1) / 2
    if total.item() != expected:
        print(f"rank {rank} FAILED: sum {total.item()} != {expected}", flush=True)
        return 1
    print(f"rank {rank} ddp ok on cuda:{local_rank} ({torch.cuda.get_device_name(local_rank)}), "
          f"sum {expected:.0f}, torch {torch.__version__}, nccl {'.'.join(map(str, torch.cuda.nccl.version()))}",
          flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
