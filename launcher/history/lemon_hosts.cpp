// Lemon hosts: see lemon_hosts.h.
#include "history/lemon_hosts.h"

#include <algorithm>
#include <ctime>
#include <map>

#include <fmt/format.h>

namespace ddplaunch {

std::vector<LemonHost> lemon_hosts(const std::vector<RunRecord>& records, LemonRule rule) {
  const std::size_t considered = std::min(rule.last_runs, records.size());
  std::map<std::string, LemonHost> by_host;
  for (std::size_t i = records.size() - considered; i < records.size(); ++i) {
    const RunRecord& run = records[i];
    std::map<std::string, HostTrouble> in_run;  // a host listed twice in one run counts once
    for (const auto& t : run.troubled_hosts) {
      auto& merged = in_run[t.host];
      merged.failures += std::max(t.failures, 0);
      merged.slowdowns += std::max(t.slowdowns, 0);
    }
    for (const auto& [host, t] : in_run) {
      if (t.failures == 0 && t.slowdowns == 0) continue;
      LemonHost& lemon = by_host[host];
      lemon.host = host;
      lemon.runs_failed += t.failures > 0;
      lemon.runs_slow += t.slowdowns > 0;
      lemon.runs_troubled += 1;
      lemon.last_trouble_unix = std::max(lemon.last_trouble_unix, run.unix_time);
    }
  }
  std::vector<LemonHost> lemons;
  for (auto& [host, lemon] : by_host) {
    if (lemon.runs_troubled < rule.min_runs) continue;
    lemon.runs_considered = static_cast<int>(considered);
    lemons.push_back(std::move(lemon));
  }
  std::sort(lemons.begin(), lemons.end(), [](const LemonHost& a, const LemonHost& b) {
    if (a.runs_troubled != b.runs_troubled) return a.runs_troubled > b.runs_troubled;
    return a.last_trouble_unix > b.last_trouble_unix;
  });
  return lemons;
}

std::string lemon_host_line(const LemonHost& lemon) {
  std::string what;
  if (lemon.runs_failed > 0) what = fmt::format("failed ranks in {}", lemon.runs_failed);
  if (lemon.runs_slow > 0)
    what += fmt::format("{}was a straggler in {}", what.empty() ? "" : " and ", lemon.runs_slow);
  char when[32] = "an unknown time";
  const std::time_t t = static_cast<std::time_t>(lemon.last_trouble_unix);
  std::tm utc{};
  if (lemon.last_trouble_unix > 0 && ::gmtime_r(&t, &utc)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
  return fmt::format("host {} {} of the last {} runs (last on {})", lemon.host, what, lemon.runs_considered, when);
}

std::string lemon_hosts_section(const RunHistory& history, LemonRule rule) {
  const std::string& path = history.path();
  if (!history.unreadable().empty())
    return fmt::format("hosts that caused trouble: not known, the run history {} is not readable ({})\n", path,
                       history.unreadable());
  std::string lines;
  const std::size_t runs = std::min(rule.last_runs, history.records().size());
  const auto lemons = lemon_hosts(history.records(), rule);
  if (runs == 0) {
    lines = fmt::format("hosts that caused trouble: none, no run recorded yet in the run history {}\n", path);
  } else if (lemons.empty()) {
    lines = fmt::format("hosts that caused trouble: none in {} or more of the last {} runs (run history {})\n",
                        rule.min_runs, runs, path);
  } else {
    lines = fmt::format("hosts that caused trouble in {} or more of the last {} runs (run history {}):\n", rule.min_runs,
                        runs, path);
    for (const LemonHost& lemon : lemons) lines += "  " + lemon_host_line(lemon) + "\n";
  }
  if (history.skipped_lines() > 0)
    lines += fmt::format("  ({} line(s) of the run history are not records and were skipped)\n", history.skipped_lines());
  return lines;
}

}  // namespace ddplaunch
