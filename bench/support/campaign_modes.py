"""The crash campaign's three launch modes, each a command line per node for the same job:
torchrun as users run it (c10d rendezvous, --max-restarts 3), torchrun with the seed's recipe inside the
job (CAMPAIGN_RECIPE=1: seed_recipe.init_ddp), and ddplaunch with its defaults (the same --max-restarts 3;
its init deadline scaled like the recipe's; a hot spare where the scenario loses a node and the binary
has --spares)."""
import functools
import os
import subprocess

import paths

TRAIN = os.path.join(paths.SUPPORT, "campaign_train.py")
WRAPPER = os.path.join(paths.SUPPORT, "campaign_wrapper.sh")
MODES = ["torchrun", "torchrun + seed recipe", "ddplaunch"]
MAX_RESTARTS = "3"


@functools.lru_cache(maxsize=1)
def ddplaunch_has_spares():
    out = subprocess.run([paths.ddplaunch(), "--help"], capture_output=True, text=True).stdout
    return "--spares" in out


def program(scenario, python_needed):
    if scenario.wrapper:
        return [WRAPPER]
    return (["/usr/bin/python3"] if python_needed else []) + [TRAIN]


def torchrun(run, node, master):
    s = run.scenario
    prog = ["--no_python", WRAPPER] if s.wrapper else [TRAIN]
    return [paths.TORCHRUN, "--nnodes", str(s.nodes), "--nproc_per_node", "1", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", f"{master}:{run.port}", "--rdzv_id", run.job_id, "--max_restarts", MAX_RESTARTS,
            "-r", "1", "-t", "1", "--log_dir", os.path.join(run.dir, f"torchrun-node{node}"), *prog]


def ddplaunch(run, node, master, spares):
    s, sc = run.scenario, run.scale
    timeout = [f"timeout.base_s={30 * sc:g}", f"timeout.per_node_s={5 * sc:g}", f"timeout.min_s={30 * sc:g}",
               f"timeout.dedicated_nic_s={10 * sc:g}"]
    argv = [paths.ddplaunch(), "--nodes", str(s.nodes), "--nproc-per-node", "1", "--master", f"{master}:{run.port}",
            "--node-rank", str(node), "--max-restarts", MAX_RESTARTS]
    for kv in timeout:
        argv += ["--set", kv]
    if spares:
        argv += ["--spares", str(spares)]
    return argv + ["--", *program(s, True)]


def uses_spare(mode, scenario):
    return mode == "ddplaunch" and scenario.loses_node >= 0 and ddplaunch_has_spares()


def launchers(mode, run, master_of):
    """[(argv, extra env)] per launcher: the job's nodes, then a spare where one is used."""
    s = run.scenario
    env = {"CAMPAIGN_RECIPE": "1"} if mode == "torchrun + seed recipe" else {}
    spares = 1 if uses_spare(mode, s) else 0
    out = []
    for node in range(s.nodes + spares):
        master = master_of(node)
        argv = ddplaunch(run, node, master, spares) if mode == "ddplaunch" else torchrun(run, node, master)
        out.append((argv, env))
    return out
