"""Prints two plain lines per rank (for the log-line prefix template and redirects)."""
import os

rank = os.environ["RANK"]
print(f"creating rank {rank}", flush=True)
print(f"second line of rank {rank}", flush=True)
