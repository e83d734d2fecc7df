"""Tables of the crash campaign (bench/run crash-campaign): per launch mode and scenario, totals per mode."""
import statistics


def median(xs):
    return f"{statistics.median(xs):.1f}" if xs else "–"


def time_lost(r, clean_s):
    """A completed run loses what it took beyond a clean run; any other run loses all it took (and the job)."""
    if r.outcome == "completed":
        return max(0.0, r.seconds - clean_s) if clean_s is not None else None
    return r.seconds


def cell(s, n=110):
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def most_common(xs):
    return max(set(xs), key=xs.count) if xs else ""


def mode_table(results, mode, scenarios, clean_s):
    rows = ["| scenario | kind | runs | completed | failed | hung at the bound | false crashes | median time to outcome (s) "
            "| median time lost (s) | median time to the first launcher's error exit (s) | runs leaving processes | most frequent first diagnosis line (failed/hung runs) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for s in scenarios:
        rs = [r for r in results if r.mode == mode and r.scenario == s.name]
        if not rs:
            continue
        count = lambda o: sum(1 for r in rs if r.outcome == o)
        lost = [x for r in rs if (x := time_lost(r, clean_s)) is not None]
        diag = most_common([r.diagnosis for r in rs if r.outcome != "completed" and r.diagnosis])
        kind = s.kind + ("" if s.kind == "healthy" else ", recoverable" if s.recoverable else ", not recoverable")
        spare = " (with a spare)" if any(r.spare for r in rs) else ""
        rows.append(f"| {s.name}{spare} | {kind} | {len(rs)} | {count('completed')} | {count('failed')} | {count('hung')} | "
                    f"{sum(r.false_crash for r in rs)} | {median([r.seconds for r in rs])} | {median(lost)} | "
                    f"{median([r.first_error_s for r in rs if r.first_error_s is not None])} | "
                    f"{sum(1 for r in rs if r.leftovers)} | {cell(diag)} |")
    return rows


def totals(results, modes, clean):
    rows = ["| launch mode | runs | completed | completed, recoverable runs | false crashes (healthy runs killed) "
            "| failed or hung, not recoverable runs: failed within 10 s | median time lost (s) | runs leaving processes "
            "| clean run (s) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pct = lambda a, b: f"{a}/{b} ({100 * a / b:.0f}%)" if b else "–"
    for m in modes:
        rs = [r for r in results if r.mode == m]
        rec = [r for r in rs if r.recoverable]
        healthy = [r for r in rs if r.kind == "healthy"]
        unrec = [r for r in rs if not r.recoverable]
        quick_fail = sum(1 for r in unrec if r.outcome == "failed" and r.seconds <= 10)
        lost = [x for r in rs if (x := time_lost(r, clean.get(m))) is not None]
        rows.append(f"| {m} | {len(rs)} | {pct(sum(r.outcome == 'completed' for r in rs), len(rs))} | "
                    f"{pct(sum(r.outcome == 'completed' for r in rec), len(rec))} | "
                    f"{pct(sum(r.false_crash for r in healthy), len(healthy))} | {pct(quick_fail, len(unrec))} | "
                    f"{median(lost)} | {pct(sum(1 for r in rs if r.leftovers), len(rs))} | "
                    f"{median([clean[m]]) if clean.get(m) is not None else '–'} |")
    return rows
