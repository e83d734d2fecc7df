"""A small gloo DDP trainer for the hang-detection tests, unmodified except for the
modes below. Every rank prints "FINAL rank=R steps=N" when it finishes.

  --mode stall       rank --rank stops making progress after --after steps (sleeps for good);
                     the other ranks then wait in DDP's gradient all-reduce
  --mode checkpoint  rank 0 spends --seconds inside ddplaunch_shim.section("checkpoint")
                     after --after steps (the others wait in their next all-reduce)
  --mode slow        every step takes --seconds (slow, but regular)
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def stall_here():
    time.sleep(3600)  # a rank stuck for good: a deadlock, a dead data-loader worker


def checkpoint(seconds):
    import ddplaunch_shim
    with ddplaunch_shim.section("checkpoint"):
        time.sleep(seconds)  # writing a large checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["stall", "checkpoint", "slow"], required=True)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--after", type=int, default=10)
    parser.add_argument("--rank", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if args.mode == "slow":
            time.sleep(args.seconds)
        elif args.mode == "stall" and step == args.after and rank == args.rank:
            print("rank %d stalls after step %d" % (rank, step), flush=True)
            stall_here()
        elif args.mode == "checkpoint" and step == args.after and rank == 0:
            checkpoint(args.seconds)
        else:
            time.sleep(0.05)
    print("FINAL rank=%d steps=%d" % (rank, args.steps), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
