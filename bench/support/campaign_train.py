"""The crash campaign's job: a small DDP model trained for CAMPAIGN_STEPS steps on gloo, checkpointed
by rank 0 every CHECKPOINT_EVERY steps and resumed from the checkpoint on a restart. The scenario's
effects that live inside a worker are switched on by CAMPAIGN_* variables (bench/run crash-campaign);
"once" effects happen in the first attempt only (a stamp file in CAMPAIGN_RUN_DIR)."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

RUN_DIR = os.environ["CAMPAIGN_RUN_DIR"]
STEPS = int(os.environ.get("CAMPAIGN_STEPS", "200"))
CHECKPOINT_EVERY = 25
rank = int(os.environ["RANK"])
env = os.environ.get
NCCL_INIT_ERROR = ("NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system "
                   "error, NCCL version 2.14.3\nncclSystemError: System call (e.g. socket, malloc) or external "
                   "library call failed or device error.")


def first_time(what):
    """True in the first attempt that asks (the stamp outlives restarts and nodes: one shared folder)."""
    try:
        os.close(os.open(os.path.join(RUN_DIR, f"once.{what}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def applies(var):
    ranks = env(var, "")
    return ranks == "all" or str(rank) in ranks.split(",")


def write(name, text):
    with open(os.path.join(RUN_DIR, name + ".tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(RUN_DIR, name + ".tmp"), os.path.join(RUN_DIR, name))


def busy(ms):
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass


write(f"pid.r{rank}", str(os.getpid()))
if applies("CAMPAIGN_SETUP_RANKS"):
    time.sleep(float(env("CAMPAIGN_SETUP_S", "0")))  # a dataset download, a model build
if applies("CAMPAIGN_FAIL_INIT_RANKS") and first_time("fail-init"):
    raise RuntimeError(NCCL_INIT_ERROR)
if applies("CAMPAIGN_HANG_INIT_RANKS") and first_time("hang-init"):
    os.environ["MASTER_PORT"] = env("CAMPAIGN_DEAD_PORT")  # nobody listens: the store connect hangs in init
if env("CAMPAIGN_RECIPE") == "1":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from seed_recipe import init_ddp
    init_ddp("gloo")
else:
    dist.init_process_group("gloo")

torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ckpt = os.path.join(RUN_DIR, "checkpoint.pt")
start = 0
if os.path.exists(ckpt):
    state = torch.load(ckpt)
    model.module.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
pause_step = int(env("CAMPAIGN_PAUSE_STEP", "-1"))
busy_ms = float(env("CAMPAIGN_BUSY_MS", "0")) if applies("CAMPAIGN_BUSY_RANKS") else 0
chatty = applies("CAMPAIGN_CHATTY_RANKS")
for step in range(start, STEPS):
    opt.zero_grad()
    model(torch.randn(32, 64)).pow(2).mean().backward()
    opt.step()
    if busy_ms:
        busy(busy_ms)  # a CPU-starved node
    if chatty:
        print(f"rank {rank} step {step}: loss logged, a warning, some noise " + "x" * 200, file=sys.stderr)
    if rank == 0 and step == pause_step:
        time.sleep(float(env("CAMPAIGN_PAUSE_S", "0")))  # rank 0 alone evaluates; the others wait in the next all_reduce
    if rank == 0 and (step + 1) % CHECKPOINT_EVERY == 0:
        torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step + 1}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
    if rank == 0 and step % 10 == 0:
        write("progress", str(step))
dist.barrier()
if rank == 0:
    write("done", str(STEPS))
print(f"DONE rank={rank} resumed_from={start} steps={STEPS}", flush=True)
dist.destroy_process_group()
