"""A plain PyTorch DDP trainer, written as a user would (nothing ddplaunch-specific): an MLP on
synthetic regression data, sharded by rank, gradients averaged by DistributedDataParallel.
Every rank prints the same final checksum of the parameters when training is correct.
  torchrun --nproc_per_node 2 train_ddp.py [--steps N] [--lr X]
"""

import argparse

import torch
import torch.distributed as dist
from torch import nn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    # MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE come from the launcher (env://).
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    # The same full dataset on every rank (fixed seed), then this rank's strided shard.
    generator = torch.Generator().manual_seed(1234)
    x_all = torch.randn(1024, 16, generator=generator)
    w_true = torch.randn(16, 1, generator=generator)
    y_all = x_all @ w_true + 0.1 * torch.randn(1024, 1, generator=generator)
    x, y = x_all[rank::world], y_all[rank::world]

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    sgd = torch.optim.SGD(ddp.parameters(), lr=args.lr)

    loss_first = loss_last = 0.0
    for step in range(1, args.steps + 1):
        sgd.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()  # DDP all-reduces and averages the gradients here
        sgd.step()
        loss_last = loss.item()
        if step == 1:
            loss_first = loss_last
        if step % 10 == 0:
            print("step %d loss %.6f" % (step, loss_last), flush=True)

    checksum = sum(p.detach().double().sum().item() for p in model.parameters())
    print("FINAL rank=%d loss_first=%.9g loss_last=%.9g checksum=%.9g"
          % (rank, loss_first, loss_last, checksum), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
