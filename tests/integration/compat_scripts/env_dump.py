"""Writes this worker's environment, sorted, to argv[1]/env_rank<RANK>.txt: NAME=VALUE lines,
newlines in values written as \\n."""
import os
import sys

with open(os.path.join(sys.argv[1], f"env_rank{os.environ['RANK']}.txt"), "w") as f:
    for name in sorted(os.environ):
        f.write(f"{name}={os.environ[name]}".replace("\n", "\\n") + "\n")
