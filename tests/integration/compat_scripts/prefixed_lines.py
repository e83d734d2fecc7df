"""Prints two plain lines per rank (for the log-line prefix template and redirects)."""
import os
import sys

rank = os.environ["RANK"]
print(f"creating rank {rank}", flush=True)
print(f"second line of rank {rank}", flush=True)
if "--stderr-too" in sys.argv:
    print(f"stderr line of rank {rank}", file=sys.stderr, flush=True)
