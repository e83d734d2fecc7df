"""@record entry point; rank 1 raises ValueError("bad batch 42") after init. Its traceback goes
nowhere (stderr closed first), so the message reaches the launcher only via TORCHELASTIC_ERROR_FILE.
Rank 0 would wait 60 s for a peer that is gone: the launcher has to stop it."""
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.tensor([1.0])
    dist.all_reduce(t)
    print(f"INIT OK rank={rank}", flush=True)
    if rank == 1:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        raise ValueError("bad batch 42")
    time.sleep(60)


if __name__ == "__main__":
    main()
