"""A plain torch.distributed program: no optimizer, no DDP, only a loop of all_reduce calls, as
a parameter server, a metrics job or a collective benchmark is written. Unmodified torchrun-style
code.

  --steps N          all_reduce calls in all (default 40), --pause S seconds between them (0.1)
  --stall-rank R     that rank stops for good before its call number --stall-after (a real hang)
  --silent           no collective at all after init: the ranks only sleep --pause x --steps
Every rank prints "rank R done" at the end.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def stall_forever(rank):
    print("rank %d stalls" % rank, flush=True)
    while True:
        time.sleep(3600)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.1)
    parser.add_argument("--stall-rank", type=int, default=-1)
    parser.add_argument("--stall-after", type=int, default=0)
    parser.add_argument("--silent", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    total = torch.zeros(1)
    for call in range(args.steps):
        if rank == args.stall_rank and call == args.stall_after:
            stall_forever(rank)
        if args.silent:
            time.sleep(args.pause)
            continue
        value = torch.ones(1) * (rank + 1)
        dist.all_reduce(value)
        total += value
        time.sleep(args.pause)
    if not args.silent:
        dist.barrier()
    print("rank %d done %s" % (rank, os.environ.get("RANK")), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
