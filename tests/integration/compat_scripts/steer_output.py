"""Output to steer: every rank prints "rank R before N" every 0.1 s until the file named by
$STEER_FLAG exists (at most 120 s), then "rank R after N" for N in 0..4, and exits 0. No torch:
the lines are the point.
"""
import os
import sys
import time


def main():
    rank = int(os.environ["RANK"])
    flag = os.environ["STEER_FLAG"]
    deadline = time.monotonic() + 120
    n = 0
    while not os.path.exists(flag) and time.monotonic() < deadline:
        print("rank %d before %d" % (rank, n), flush=True)
        n += 1
        time.sleep(0.1)
    for n in range(5):
        print("rank %d after %d" % (rank, n), flush=True)
    sys.exit(0 if os.path.exists(flag) else 1)


if __name__ == "__main__":
    main()
