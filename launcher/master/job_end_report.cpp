// The job's end report: see job_end_report.h.
#include "master/job_end_report.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "timeline_files.h"

namespace ddplaunch {

void report_job_end(const LaunchConfig& config, const MasterTimeline& timeline, const StragglerReports& stragglers,
                    int exit_code) {
  const auto now = PolicyClock::now();
  const auto episodes = stragglers.summary_lines(now);
  for (const auto& line : episodes) spdlog::info("{}", line);
  const timeline::TimeAccount account = timeline.time_account();
  spdlog::info("{}", timeline::time_account_line(account));
  if (config.report_file.empty()) return;
  nlohmann::json report = nlohmann::json::parse(timeline::time_account_json(account));
  report["job"] = config.job_id;
  report["exit_code"] = exit_code;
  report["stragglers"] = episodes;
  const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::string error = write_whole_file(config.report_file, text); !error.empty())
    spdlog::warn("the job's report was not written: {} (--report names the file)", error);
  else
    spdlog::info("the job's report: {}", config.report_file);
}

std::vector<HostTrouble> troubled_hosts(const MasterTimeline& timeline, const StragglerReports& stragglers) {
  // On one host there is nothing to compare it with: a failure there is as likely the
  // program's, and its stragglers share the host. Only a job across hosts blames one.
  if (timeline.host_count() < 2) return {};
  std::map<std::string, HostTrouble> by_host;
  for (const auto& [host, failures] : timeline.failures_by_host()) {
    by_host[host].host = host;
    by_host[host].failures = failures;
  }
  for (const auto& [host, episodes] : stragglers.episodes_by_host()) {
    by_host[host].host = host;
    by_host[host].slowdowns = episodes;
  }
  std::vector<HostTrouble> out;
  for (auto& [host, trouble] : by_host) out.push_back(std::move(trouble));
  std::sort(out.begin(), out.end(), [](const HostTrouble& a, const HostTrouble& b) {
    return a.failures + a.slowdowns > b.failures + b.slowdowns;
  });
  if (out.size() > HostTrouble::kMaxPerRun) out.resize(HostTrouble::kMaxPerRun);
  return out;
}

}  // namespace ddplaunch
