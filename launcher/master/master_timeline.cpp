// The master's side of the job's timeline: its own events (generations are recorded where
// they are planned, failures where they are judged), the nodes' batches, and the files at
// the job's end.
#include "master/master_timeline.h"

#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "timeline_files.h"
#include "ddplaunch/base/overloaded.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/rendezvous/generation_format.h"
#include "policy/program_error.h"
#include "timeline/trace_json.h"

namespace ddplaunch {

MasterTimeline::MasterTimeline(const JobPolicy& policy, const LaunchConfig& config)
    : policy_(policy), job_id_(config.job_id), trace_file_(config.trace_file), log_dir_(config.log_dir) {}

void MasterTimeline::on_node_events(int node_rank, const rendezvous::Message& m) {
  auto batch = messages::decode_timeline_events(m);
  if (!batch) return;
  timeline_.record_from_node(node_rank, batch->sent_at_us, timeline_clock_us(), std::move(batch->events));
}

void MasterTimeline::begin_generation(Generation generation, const std::vector<rendezvous::NodeRecord>& nodes,
                                      int world, double init_deadline_s) {
  for (const auto& n : nodes) timeline_.name_node(n.node_rank, n.facts.hostname);
  first_error_.clear();
  timeline::Event begins;
  begins.at_us = timeline_clock_us();
  begins.generation = generation;
  begins.type = timeline::EventType::State;
  begins.name = fmt::format("generation {}", generation);
  begins.category = "generation";
  begins.detail = fmt::format("{} node(s), world size {}, init deadline {}", nodes.size(), world,
                              human_duration(init_deadline_s));
  timeline_.record(std::move(begins));
}

void MasterTimeline::record_failure(int node_rank, Generation generation, const FailureReport& report) {
  const WorkerFailure& f = report.failure;
  // The program's own exception, as the terminal's root cause shows it.
  const auto exception = python_exception(f);
  const std::string error = exception ? exception->line : f.detail;
  if (first_error_.empty()) first_error_ = error;
  timeline_.record_failure(node_rank, f.global_rank, generation, timeline_clock_us(),
                           fmt::format("rank {} (node {}, {}) {} in {}{}{}", f.global_rank, node_rank, report.host,
                                       f.status ? f.status->describe() : std::string(failure_kind_name(f.kind)),
                                       failure_phase_name(f.phase), error.empty() ? "" : ": ", error));
}

std::string MasterTimeline::with_error(const std::string& reason) const {
  if (first_error_.empty() || reason.find(first_error_) != std::string::npos) return reason;
  return reason + ": " + first_error_;
}

void MasterTimeline::record_instant(int node, std::string name, std::string category, std::string detail, int rank) {
  timeline::Event e;
  e.at_us = timeline_clock_us();
  e.generation = policy_.generation();
  e.node = node;
  e.rank = rank;
  e.name = std::move(name);
  e.category = std::move(category);
  e.detail = std::move(detail);
  timeline_.record(std::move(e));
}

// Timers, logs and plans leave no mark of their own (a plan is recorded as its generation
// begins).
void MasterTimeline::record_decisions(const JobPolicy::Decisions& decisions) {
  const std::int64_t now = timeline_clock_us();
  for (const auto& d : decisions) std::visit(Overloaded{
      [](const auto&) {},
      [&](const decision::OrderRestart& restart) {
        if (restart.hold)
          return timeline_.record_order("held: too few nodes", "membership", restart.generation, now, restart.reason);
        timeline_.record_order(fmt::format("restart → generation {}", restart.generation), "restart",
                               restart.generation, now, restart.reason);
        timeline_.set_root_cause(with_error(restart.reason));
      },
      [&](const decision::OrderStop& stop) {
        timeline_.record_order("stop", "stop", stop.generation, now, stop.reason);
        if (stop.exit_code != 0) timeline_.set_root_cause(with_error(stop.reason));
      },
      [&](const decision::EndJob& end) { timeline_.record_end(end.exit_code, policy_.generation(), now); },
      [&](const decision::RefuseJob& refuse) {
        record_instant(timeline::kJobLane, "refused", "job", refuse.reason);
        timeline_.set_root_cause(refuse.reason);
      },
      [&](const decision::AbortJoin& abort) {
        record_instant(timeline::kJobLane, "join aborted", "job", abort.reason);
        timeline_.set_root_cause(abort.reason);
      },
      [&](const decision::TellMember& tell) {
        record_instant(timeline::kJobLane, tell.dismiss ? "launcher dismissed" : "hot spare", "membership", tell.text);
      },
  }, d);
}

void MasterTimeline::record_counter(int node, int rank, std::string name, double value) {
  timeline::Event e;
  e.at_us = timeline_clock_us();
  e.generation = policy_.generation();
  e.node = node;
  e.rank = rank;
  e.type = timeline::EventType::Counter;
  e.name = std::move(name);
  e.category = "straggler";
  e.value = value;
  timeline_.record(std::move(e));
}

timeline::TimeAccount MasterTimeline::time_account() const {
  return timeline::account_time(timeline_.aligned_events(), timeline_clock_us());
}

std::map<std::string, int> MasterTimeline::failures_by_host() const {
  std::map<std::string, int> by_host;
  const auto& hosts = timeline_.node_hosts();
  for (const auto& e : timeline_.aligned_events()) {
    if (e.category != "failure" || e.node == timeline::kJobLane) continue;
    if (auto host = hosts.find(e.node); host != hosts.end()) ++by_host[host->second];
  }
  return by_host;
}

std::size_t MasterTimeline::host_count() const {
  std::set<std::string> hosts;
  for (const auto& [node, host] : timeline_.node_hosts()) hosts.insert(host);
  return hosts.size();
}

std::string MasterTimeline::json() const {
  return timeline::trace_json(timeline_, {job_id_, timeline_clock_us()});
}

void MasterTimeline::write_files() const {
  if (trace_file_.empty() && log_dir_.empty()) return;
  const std::string json_text = json();
  if (!trace_file_.empty()) {
    const TimelinePaths paths = timeline_paths_for(trace_file_);
    if (std::string error = write_timeline(paths, json_text); !error.empty())
      spdlog::warn("the job's timeline was not written: {} (--trace names the file)", error);
    else
      spdlog::info("the job's timeline: {} (open in https://ui.perfetto.dev or chrome://tracing) and {} (any browser)",
                   paths.json, paths.page);
  }
  if (!log_dir_.empty())
    if (std::string error = write_timeline_to_log_dir(log_dir_, json_text); !error.empty())
      spdlog::warn("the job's timeline was not written to the log directory: {}", error);
}

}  // namespace ddplaunch
