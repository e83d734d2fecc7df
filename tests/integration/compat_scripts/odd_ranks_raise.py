"""PyTorch's own torchrun test, in our words: odd ranks raise at once (in setup, before any
process group); even ranks wait to be stopped. Every attempt prints one line per rank, so
the number of attempts is counted from the output."""
import os
import sys
import time

rank = int(os.environ["RANK"])
print(f"ATTEMPT rank={rank} restart={os.environ.get('TORCHELASTIC_RESTART_COUNT')}", flush=True)
if rank % 2 == 1:
    raise ValueError(f"odd rank {rank} refuses to train")
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
