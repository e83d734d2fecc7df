"""A plain (torch-free) rank that asks the person something, for the rank-prompt tests.
ASK_RANK (default 0; "all": every rank) asks; the others print "rank R finished" at once. ASK=
  input       input("overwrite checkpoint? [y/N] "), then "rank R read 'ANSWER'"
  getpass     getpass.getpass("token: "), then the answer's length and its reverse (never itself)
  readline    sys.stdin.readline() with no prompt at all, then "rank R read 'LINE'"
  breakpoint  breakpoint(), with the local `secret` = 4242; then "rank R continued"
  child_breakpoint  the same in a forked multiprocessing child (as a DataLoader worker is, its
              sys.stdin replaced with /dev/null), then "rank R: child exited 0"
  dataloader_breakpoint  the same in a torch DataLoader worker's __getitem__ (needs torch),
              then "rank R: got batch [7]"
  piped_child a Python program the rank starts with data on its stdin, then "rank R: child read 'DATA'"
An end of file is said: "rank R: EOFError after S s" (exit 0). DONE_FILE (a path): the other
ranks wait for the asker to create it, as ranks of a job wait for each other in a collective.
"""
import getpass
import os
import sys
import time

rank = int(os.environ.get("RANK", "0"))
ask = os.environ.get("ASK", "input")
asking = os.environ.get("ASK_RANK", "0")
done_file = os.environ.get("DONE_FILE")  # set: the others wait (at most 60 s) for the asker to touch it
if asking != "all" and rank != int(asking):
    for _ in range(600 if done_file else 0):
        if os.path.exists(done_file):
            break
        time.sleep(0.1)
    print("rank %d finished" % rank, flush=True)
    sys.exit(0)

started = time.monotonic()
try:
    if ask == "input":
        print("rank %d read %r" % (rank, input("overwrite checkpoint? [y/N] ")), flush=True)
    elif ask == "getpass":
        token = getpass.getpass("token: ")
        print("rank %d read a token of %d characters, reversed %s" % (rank, len(token), token[::-1]), flush=True)
    elif ask == "readline":
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        print("rank %d read %r" % (rank, line.rstrip("\n")), flush=True)
    elif ask == "breakpoint":
        secret = 4242
        breakpoint()
        print("rank %d continued" % rank, flush=True)
    elif ask == "child_breakpoint":
        import multiprocessing

        def child():
            secret = 4242
            breakpoint()
            print("rank %d's child continued" % rank, flush=True)

        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        process.join()
        print("rank %d: child exited %d" % (rank, process.exitcode), flush=True)
    elif ask == "piped_child":
        import subprocess

        child = subprocess.run([sys.executable, "-c", "import sys; print(sys.stdin.read())"], input="piped data",
                               capture_output=True, text=True, timeout=60)
        print("rank %d: child read %r" % (rank, child.stdout.strip()), flush=True)
    elif ask == "dataloader_breakpoint":
        import torch.utils.data

        class Stops(torch.utils.data.Dataset):
            def __len__(self):
                return 1

            def __getitem__(self, index):
                secret = 4242
                breakpoint()
                return 7

        for batch in torch.utils.data.DataLoader(Stops(), batch_size=1, num_workers=1):
            print("rank %d: got batch %s" % (rank, batch.tolist()), flush=True)
except EOFError:
    print("rank %d: EOFError after %.2f s" % (rank, time.monotonic() - started), flush=True)
if done_file:
    open(done_file, "w").close()
