"""Real DDP training (gloo, a tiny linear model, SGD) in which one rank fails once: in the
first generation (TORCHELASTIC_RESTART_COUNT 0) rank --fail-rank exits 1 after --fail-after
steps; after the group restart every rank trains --steps steps and prints "rank R trained".
Unmodified torchrun-style code.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--fail-rank", type=int, default=3)
    parser.add_argument("--fail-after", type=int, default=2)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    model = DistributedDataParallel(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(args.steps):
        if restarts == 0 and rank == args.fail_rank and step == args.fail_after:
            print("rank %d fails at step %d" % (rank, step), flush=True)
            sys.exit(1)
        optimizer.zero_grad()
        model(torch.randn(4, 8)).sum().backward()
        optimizer.step()
    dist.barrier()
    print("rank %d trained" % rank, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
