// Rendering of the status tables.
#include "master/status_table.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ddplaunch/rendezvous/generation_format.h"

namespace ddplaunch {

namespace {
// A rank's state as the table shows it: the node's word for it, suspect where the watch found so.
std::string state_of(const RankReport& r, const std::vector<int>& suspect) {
  std::string state = r.state.empty() ? std::string(rank_phase_name(r.phase)) : r.state;
  if (r.phase == RankPhase::Running && !r.in_debugger() && std::find(suspect.begin(), suspect.end(), r.rank) != suspect.end())
    state = "suspect";
  return state;
}
}  // namespace

namespace {
// "37 %" of the rank's time computing (the rest waiting in collectives), "37 % slow" for the
// straggler; "-" before the watch has a window of it.
std::string compute_text(const StatusExtras& extras, int rank) {
  auto share = extras.compute_share.find(rank);
  if (share == extras.compute_share.end()) return "-";
  return fmt::format("{:.0f} %{}", share->second * 100.0, extras.straggler == rank ? " slow" : "");
}

// "12 s ago" from the node's last report; "-" before any progress.
std::string progress_text(const RankReport& r) {
  if (r.progress_age_ms < 0) return "-";
  return human_duration(static_cast<double>(r.progress_age_ms) / 1000.0) + " ago";
}
}  // namespace

std::string rank_log_file(const StatusExtras& extras, int node, int rank) {
  auto reported = extras.nodes.find(node);
  if (reported == extras.nodes.end() || reported->second.log_dir.empty()) return "-";
  return fmt::format("{}/rank_{}.log", reported->second.log_dir, rank);
}

namespace {
std::string host_of(const StatusExtras& extras, int node) {
  auto reported = extras.nodes.find(node);
  return reported == extras.nodes.end() ? "-" : reported->second.host;
}
std::string generation_of(const StatusExtras& extras, int node) {
  auto reported = extras.nodes.find(node);
  return reported == extras.nodes.end() ? "-" : to_string(reported->second.generation);
}
}  // namespace

std::string render_status_table(const std::string& job_id, const JobPolicy& policy, const StatusExtras& extras) {
  std::string s = fmt::format("job {}  {}  generation {}  restarts {}/{}  init deadline {}  worker port {}  learnt step {}\n",
                              job_id, job_phase_name(policy.phase()), policy.generation(), policy.budget().used(),
                              policy.budget().total(), human_duration(policy.init_deadline().seconds()), policy.worker_port(),
                              extras.learnt_step_interval_s > 0 ? human_duration(extras.learnt_step_interval_s) : "-");
  if (policy.phase() == JobPhase::Ended) s += "the job has ended.\n";
  s += fmt::format("{:<5} {:<20} {:<16} {:<6} {:<8} {:<4} {}\n", "node", "host", "address", "nproc", "rtt_ms", "gen",
                   "last error");
  for (const auto& n : policy.nodes()) {
    std::string error = policy.last_error(n.node_rank);
    s += fmt::format("{:<5} {:<20} {:<16} {:<6} {:<8.2f} {:<4} {}\n", n.node_rank, n.facts.hostname, n.observed_address,
                     n.facts.nproc, n.rtt_ms, generation_of(extras, n.node_rank), error.empty() ? "-" : error);
  }
  s += fmt::format("\n{:<6} {:<5} {:<20} {:<8} {:<10} {:<5} {:<8} {:<9} {:<14} {:<10} {}\n", "rank", "node", "host",
                   "pid", "state", "inits", "steps", "compute", "progress", "for", "log");
  const auto now = PolicyClock::now();
  for (const auto& t : policy.ranks().ranks()) {
    const std::string state = state_of(t.last, extras.suspect);
    s += fmt::format("{:<6} {:<5} {:<20} {:<8} {:<10} {:<5} {:<8} {:<9} {:<14} {:<10} {}\n", t.last.rank, t.node,
                     host_of(extras, t.node), t.last.pid > 0 ? std::to_string(t.last.pid) : "-", state,
                     t.last.init_entries, t.last.steps, compute_text(extras, t.last.rank), progress_text(t.last),
                     human_duration(std::chrono::duration<double>(now - t.since).count()),
                     rank_log_file(extras, t.node, t.last.rank));
  }
  if (extras.straggler && !extras.straggler_signals.empty())
    s += fmt::format("\nrank {} holds the job back; on its node: {}\n", *extras.straggler,
                     fmt::join(extras.straggler_signals, "; "));
  if (!extras.time_account_line.empty()) s += fmt::format("\nso far: {}\n", extras.time_account_line);
  return s;
}


std::string render_status_json(const std::string& job_id, const JobPolicy& policy, const StatusExtras& extras) {
  using Json = nlohmann::json;
  Json doc{{"job", job_id},
           {"phase", job_phase_name(policy.phase())},
           {"generation", policy.generation().value},
           {"restarts_used", policy.budget().used()},
           {"restart_budget", policy.budget().total()},
           {"init_deadline_s", policy.init_deadline().seconds()},
           {"worker_port", policy.worker_port()},
           {"learnt_step_interval_s", extras.learnt_step_interval_s},
           {"straggler_signals", extras.straggler_signals},
           {"time_account", extras.time_account_json.empty() ? Json(nullptr)
                                                             : Json::parse(extras.time_account_json, nullptr, false)},
           {"nodes", Json::array()},
           {"ranks", Json::array()}};
  for (const auto& n : policy.nodes())
    doc["nodes"].push_back({{"node", n.node_rank}, {"host", n.facts.hostname}, {"address", n.observed_address},
                            {"nproc", n.facts.nproc}, {"rtt_ms", n.rtt_ms}, {"last_error", policy.last_error(n.node_rank)},
                            {"generation", extras.nodes.count(n.node_rank)
                                               ? Json(extras.nodes.at(n.node_rank).generation.value)
                                               : Json(nullptr)}});
  const auto now = PolicyClock::now();
  for (const auto& t : policy.ranks().ranks()) {
    const std::string log = rank_log_file(extras, t.node, t.last.rank);
    doc["ranks"].push_back(
        {{"rank", t.last.rank},
         {"node", t.node},
         {"host", extras.nodes.count(t.node) ? extras.nodes.at(t.node).host : ""},
         {"pid", t.last.pid},
         {"state", state_of(t.last, extras.suspect)},
         {"log_file", log == "-" ? Json(nullptr) : Json(log)},
         {"inits", t.last.init_entries},
         {"steps", t.last.steps},
         {"compute_share", extras.compute_share.count(t.last.rank) ? Json(extras.compute_share.at(t.last.rank)) : Json(nullptr)},
         {"straggler", extras.straggler == t.last.rank},
         {"cpu_cores", extras.cpu_cores.count(t.last.rank) ? Json(extras.cpu_cores.at(t.last.rank)) : Json(nullptr)},
         {"progress_age_s", t.last.progress_age_ms < 0 ? Json(nullptr) : Json(t.last.progress_age_ms / 1000.0)},
         {"in_state_s", std::chrono::duration<double>(now - t.since).count()}});
  }
  // Peer text (host names, errors) may be anything: replaced, never refused, so the document stays valid.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string render_joining_table(const std::string& job_id, int expected_nodes,
                                 const std::vector<rendezvous::NodeRecord>& joined) {
  std::string s = fmt::format("job {}  joining: {} of {} node(s) joined, {} missing\n", job_id, joined.size(),
                              expected_nodes, expected_nodes - static_cast<int>(joined.size()));
  s += fmt::format("{:<5} {:<20} {:<16} {:<6}\n", "node", "host", "address", "nproc");
  for (const auto& n : joined)
    s += fmt::format("{:<5} {:<20} {:<16} {:<6}\n", n.node_rank >= 0 ? std::to_string(n.node_rank) : "?",
                     n.facts.hostname, n.observed_address, n.facts.nproc);
  return s;
}

}  // namespace ddplaunch
