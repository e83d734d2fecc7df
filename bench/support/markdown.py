"""Writes one "## Heading" section of BENCHMARKS.md, keeping every other section as it is.
A new section goes before "## Rendezvous scale" (owned by bench/run rendezvous) or at the end."""
import os
import subprocess

from paths import REPO

BENCH_MD = os.path.join(REPO, "BENCHMARKS.md")
LAST = "## Rendezvous scale"


def machine_line():
    load = open("/proc/loadavg").read().split()[:3]
    cores = os.cpu_count()
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "?"
    stamp = subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"], capture_output=True, text=True).stdout.strip()
    return f"Machine: {cores} cores, load average {' '.join(load)} (1/5/15 min) when written, {stamp}, commit {rev}."


def write_section(heading, body):
    """heading: '## Name'; body: the text under it (no heading)."""
    text = open(BENCH_MD).read() if os.path.exists(BENCH_MD) else f"# Benchmarks\n\n{LAST}\n\n(not run yet: bench/run rendezvous)\n"
    lines = text.split("\n")
    section = [heading, "", *body.rstrip("\n").split("\n"), ""]
    start = next((i for i, l in enumerate(lines) if l.strip() == heading), None)
    if start is not None:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = section
    else:
        at = next((i for i, l in enumerate(lines) if l.strip() == LAST), len(lines))
        lines[at:at] = section
    with open(BENCH_MD + ".tmp", "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")
    os.replace(BENCH_MD + ".tmp", BENCH_MD)
