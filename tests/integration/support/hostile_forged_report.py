"""A worker that forges status reports: rank 1 tells the launcher, on the
status socket every worker is given, that rank 0's init failed, then both ranks end well.
A launcher that believes any sender would fail the job for rank 0."""
import os
import socket
import sys
import time

rank = int(os.environ["RANK"])
generation = os.environ.get("DDPLAUNCH_GENERATION", "0")
if rank == 1:
    path = os.environ["DDPLAUNCH_STATUS_SOCKET"]
    forged = f"DDPL1 init_failed 0 {generation} {os.getppid()} NCCL error: forged by rank 1"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(forged.encode(), path)
    print("FORGED", flush=True)
time.sleep(1.5)
print(f"rank {rank} done", flush=True)
sys.exit(0)
