"""A gloo DDP trainer that stops in the debugger, for the interactive-debugging tests.
Unmodified torchrun-style code; the environment says where and how it stops:

  BP_RANKS=1,3     the ranks that stop (none when unset)
  BP_STEP=2        after which step
  BP_STYLE=        breakpoint (default) | set_trace | pdb_class | reopen_stdin | dist_breakpoint
                   reopen_stdin: a Pdb that reopens /dev/stdin (the ForkedPdb recipe);
                   dist_breakpoint: torch.distributed.breakpoint's pattern (torch >= 2.2, written
                   out here for torch 1.13): the chosen rank stops in such a Pdb, every rank then
                   meets in a barrier
  STALL_RANK=1     after STALL_STEP steps that rank stops making progress for good (a real hang)
  STEPS=6          steps in all; STEP_SLEEP=0.05 seconds between them
Each may also be given as an argument KEY=VALUE (a fan-out passes only some variable families).
Every rank prints "rank R finished" at the end. At the stop, the local variable `secret` is
1000 + 10 x rank + step.
"""
import os
import pdb
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class ReopenedStdinPdb(pdb.Pdb):
    """The ForkedPdb / torch.distributed.breakpoint recipe: read the terminal through a fresh
    open of /dev/stdin (for a worker whose sys.stdin was replaced or closed)."""

    def interaction(self, *args, **kwargs):
        saved = sys.stdin
        try:
            sys.stdin = open("/dev/stdin")
            pdb.Pdb.interaction(self, *args, **kwargs)
        finally:
            sys.stdin = saved


def stop_here(rank, step, style):
    secret = 1000 + 10 * rank + step
    if style == "breakpoint":
        breakpoint()
    elif style == "set_trace":
        pdb.set_trace()
    elif style == "pdb_class":
        pdb.Pdb().set_trace()
    elif style in ("reopen_stdin", "dist_breakpoint"):
        ReopenedStdinPdb().set_trace()
    return secret


def main():
    for argument in sys.argv[1:]:
        key, _, value = argument.partition("=")
        os.environ[key] = value
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    bp_ranks = {int(r) for r in os.environ.get("BP_RANKS", "").split(",") if r}
    bp_step = int(os.environ.get("BP_STEP", "2"))
    style = os.environ.get("BP_STYLE", "breakpoint")
    stall_rank = int(os.environ.get("STALL_RANK", "-1"))
    stall_step = int(os.environ.get("STALL_STEP", "0"))
    steps = int(os.environ.get("STEPS", "6"))
    pause = float(os.environ.get("STEP_SLEEP", "0.05"))
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        optimizer.zero_grad()
        model(torch.ones(8, 4)).sum().backward()
        optimizer.step()
        if step == bp_step:
            if style == "dist_breakpoint":
                if rank == min(bp_ranks or {0}):
                    stop_here(rank, step, style)
                dist.barrier()
            elif rank in bp_ranks:
                stop_here(rank, step, style)
        if rank == stall_rank and step == stall_step:
            print("rank %d stalls at step %d" % (rank, step), flush=True)
            time.sleep(3600)
        time.sleep(pause)
    dist.barrier()
    print("rank %d finished" % rank, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
