"""Gloo steps (an all_reduce each) in which rank $FAIL_RANK (default 1) raises
ValueError("bad batch at step 6") while loading step 6's batch; the other ranks wait in that
step's all_reduce and fail after it (gloo: the peer is gone). With FAIL_FIRST_ONLY=1 only the
first generation fails (TORCHELASTIC_RESTART_COUNT 0): a restart then trains to the end.
Unmodified torchrun-style code."""
import os

import torch
import torch.distributed as dist

FAIL_RANK = int(os.environ.get("FAIL_RANK", "1"))
FAIL_STEP = 6
STEPS = 10


def load_batch(step, rank):
    failing = rank == FAIL_RANK and step == FAIL_STEP
    if failing and (os.environ.get("FAIL_FIRST_ONLY") != "1" or os.environ.get("TORCHELASTIC_RESTART_COUNT") == "0"):
        raise ValueError("bad batch at step %d" % step)
    return torch.ones(1) * step


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(STEPS):
        batch = load_batch(step, rank)
        dist.all_reduce(batch)
        print("rank %d step %d sum %g" % (rank, step, batch.item()), flush=True)
    dist.barrier()
    print("rank %d trained" % rank, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
