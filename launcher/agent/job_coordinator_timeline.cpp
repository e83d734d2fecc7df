// The master's side of the job's timeline: its own events (generations are recorded where
// they are planned, failures where they are judged), the nodes' batches, and the files at
// the job's end.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/job_coordinator.h"
#include "agent/rank_timeline_reporter.h"
#include "agent/timeline_files.h"
#include "ddplaunch/base/overloaded.h"
#include "timeline/trace_json.h"

namespace ddplaunch {

void JobCoordinator::on_timeline_events(int node_rank, const rendezvous::Message& m) {
  auto batch = messages::decode_timeline_events(m);
  if (!batch) return;  // a malformed batch costs the picture those events, nothing more
  timeline_.record_from_node(node_rank, batch->sent_at_us, timeline_clock_us(), std::move(batch->events));
}

void JobCoordinator::record_instant(int node, std::string name, std::string category, std::string detail) {
  timeline::Event e;
  e.at_us = timeline_clock_us();
  e.generation = policy_.generation();
  e.node = node;
  e.name = std::move(name);
  e.category = std::move(category);
  e.detail = std::move(detail);
  timeline_.record(std::move(e));
}

// What the job does, as the timeline shows it: orders and their causes. Timers, logs and
// plans leave no mark of their own (a plan is recorded as its generation begins).
void JobCoordinator::record_decisions(const JobPolicy::Decisions& decisions) {
  const std::int64_t now = timeline_clock_us();
  for (const auto& d : decisions) std::visit(Overloaded{
      [](const auto&) {},
      [&](const decision::OrderRestart& restart) {
        if (restart.hold)
          return timeline_.record_order("held: too few nodes", "membership", restart.generation, now, restart.reason);
        timeline_.record_order(fmt::format("restart → generation {}", restart.generation), "restart",
                               restart.generation, now, restart.reason);
        timeline_.set_root_cause(restart.reason);
      },
      [&](const decision::OrderStop& stop) {
        timeline_.record_order("stop", "stop", stop.generation, now, stop.reason);
        if (stop.exit_code != 0) timeline_.set_root_cause(stop.reason);
      },
      [&](const decision::EndJob& end) { timeline_.record_end(end.exit_code, now); },
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

std::string JobCoordinator::timeline_json() const {
  return timeline::trace_json(timeline_, {settings_.config.job_id, timeline_clock_us()});
}

void JobCoordinator::write_timeline_files() {
  const LaunchConfig& c = settings_.config;
  if (c.trace_file.empty() && c.log_dir.empty()) return;
  const std::string json = timeline_json();
  if (!c.trace_file.empty()) {
    const TimelinePaths paths = timeline_paths_for(c.trace_file);
    if (std::string error = write_timeline(paths, json); !error.empty())
      spdlog::warn("the job's timeline was not written: {} (--trace names the file)", error);
    else
      spdlog::info("the job's timeline: {} (open in https://ui.perfetto.dev or chrome://tracing) and {} (any browser)",
                   paths.json, paths.page);
  }
  if (!c.log_dir.empty())
    if (std::string error = write_timeline_to_log_dir(c.log_dir, json); !error.empty())
      spdlog::warn("the job's timeline was not written to the log directory: {}", error);
}

}  // namespace ddplaunch
