"""The one line of a launcher's output a person would read first (bench/run fault-matrix, bench/run crash-campaign)."""
import re


def diagnosis(text, succeeded):
    """The one line a person would read first: ddplaunch's error / summary, or torchrun's last error."""
    banner = re.compile(r"^\*+$|OMP_NUM_THREADS|^WARNING:torch\.distributed\.run:$")  # torchrun's start banner
    lines = [l.strip() for l in text.splitlines() if l.strip() and not banner.search(l.strip())]
    if succeeded:
        for l in lines:
            if "job succeeded" in l:
                return re.sub(r"^\S+ ddplaunch(\[node \d+\])? info: ", "", l)
        return ""
    for pat in (r"ddplaunch(\[node \d+\])? error: (.*)", r"JOB FAILED.*"):
        for l in lines:
            m = re.search(pat, l)
            if m:
                return m.group(m.lastindex or 0)
    for l in reversed(lines):
        if re.search(r"Error|error|Exception|failed|Timeout|refused", l) and "^^^" not in l:
            return l
    return lines[-1] if lines else "(nothing printed but the start banner)"
