// JobCoordinator: planning, restart policy and the end of the job, on the master only.
#include "agent/job_coordinator.h"

#include <algorithm>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/root_cause.h"
#include "ddplaunch/preflight/port.h"
#include "ddplaunch/preflight/resolve.h"

namespace ddplaunch {

namespace {
bool mentions_port_in_use(const WorkerFailure& f) {
  auto has = [](const std::string& s) {
    return s.find("EADDRINUSE") != std::string::npos || s.find("address already in use") != std::string::npos ||
           s.find("Address already in use") != std::string::npos;
  };
  if (has(f.detail)) return true;
  return std::any_of(f.tail.begin(), f.tail.end(), has);
}
}  // namespace

JobCoordinator::JobCoordinator(boost::asio::io_context& io, CoordinatorSettings settings)
    : io_(io), settings_(std::move(settings)), backoff_timer_(io) {}

std::string JobCoordinator::check_node_facts(const std::vector<rendezvous::NodeRecord>& nodes) const {
  std::vector<std::string> problems;
  if (settings_.master_is_loopback && nodes.size() > 1) {
    for (const auto& n : nodes)
      if (!preflight::is_loopback(n.observed_address))
        problems.push_back(fmt::format(
            "the master address {} is loopback, but node {} ({}) joined from {}: on a multi-node job MASTER_ADDR "
            "must be node 0's routable address; pass --master <node 0's IP or name>:PORT",
            settings_.worker_master_addr, n.node_rank, n.facts.hostname, n.observed_address));
  }
  const auto& reference = nodes.front().facts;
  for (const auto& n : nodes) {
    auto compare = [&](const char* what, const std::string& mine, const std::string& theirs) {
      if (mine != theirs && !mine.empty() && !theirs.empty())
        problems.push_back(fmt::format("node {} ({}) has {} '{}' but node {} ({}) has '{}'", n.node_rank,
                                       n.facts.hostname, what, theirs, nodes.front().node_rank, reference.hostname,
                                       mine));
    };
    compare("program fingerprint", reference.program_fingerprint, n.facts.program_fingerprint);
    compare("NCCL version", reference.nccl_version, n.facts.nccl_version);
    compare("GPU driver version", reference.driver_version, n.facts.driver_version);
  }
  if (problems.empty()) return {};
  std::string text = fmt::format("{}", fmt::join(problems, "\n  "));
  bool loopback_problem = settings_.master_is_loopback && nodes.size() > 1 &&
                          std::any_of(nodes.begin(), nodes.end(),
                                      [](const auto& n) { return !preflight::is_loopback(n.observed_address); });
  if (loopback_problem || settings_.config.version_mismatch == "refuse") return text;
  spdlog::warn("nodes differ (version_mismatch: warn):\n  {}", text);
  return {};
}

rendezvous::JobPlan JobCoordinator::plan(std::uint64_t generation, const std::vector<rendezvous::NodeRecord>& nodes) {
  rendezvous::JobPlan plan;
  generation_ = static_cast<long>(generation);
  nodes_ = nodes;
  node_count_ = static_cast<int>(nodes.size());
  decided_ = false;
  first_failure_.reset();
  finished_nodes_.clear();
  finished_exit_code_ = 0;
  stop_exit_code_.reset();

  if (std::string problem = check_node_facts(nodes); !problem.empty()) {
    plan.refusal = "the job cannot start:\n  " + problem;
    return plan;
  }
  const LaunchConfig& c = settings_.config;
  // Worker port: checked (or picked) on the master right before the workers start.
  bool fresh_port = c.worker_port == "auto" || (generation > 0 && port_at_fault_);
  if (fresh_port) {
    auto port = preflight::find_free_port(settings_.worker_bind_address);
    if (!port) {
      plan.refusal = "no free worker port on the master: " + port.error;
      return plan;
    }
    if (c.worker_port != "auto")
      spdlog::warn("worker port {} was in use in generation {}; using free port {} instead", c.worker_port,
                   generation - 1, *port);
    worker_port_ = *port;
  } else {
    worker_port_ = std::stoi(c.worker_port);
    if (auto bindable = preflight::check_port_bindable(settings_.worker_bind_address, worker_port_); !bindable) {
      plan.refusal = fmt::format("worker port check failed on the master (node 0): {}", bindable.message);
      return plan;
    }
  }
  port_at_fault_ = false;
  double rtt_ms = 0;
  for (const auto& n : nodes) rtt_ms = std::max(rtt_ms, n.rtt_ms);
  const bool dedicated_nic = !c.program.empty() && node_count_ > 1 && std::getenv("NCCL_SOCKET_IFNAME") != nullptr;
  timeout_s_ = preflight::compute_timeout(c.timeout, node_count_, dedicated_nic, rtt_ms, static_cast<int>(generation));
  plan.worker_master_addr = settings_.worker_master_addr;
  plan.worker_master_port = worker_port_;
  plan.timeout_s = timeout_s_;
  plan.run_id = c.job_id;
  plan.extra["restarts_used"] = std::to_string(restarts_used_);
  timeout_explained_ =
      preflight::explain_timeout(c.timeout, node_count_, dedicated_nic, rtt_ms, static_cast<int>(generation));
  int world = 0;
  for (const auto& n : nodes) world += n.facts.nproc;
  spdlog::info("generation {}: {} node(s), world size {}, MASTER_ADDR={} MASTER_PORT={}, timeout {:g} s", generation,
               node_count_, world, plan.worker_master_addr, worker_port_, timeout_s_);
  return plan;
}

void JobCoordinator::on_message(int node_rank, const rendezvous::Message& m) {
  if (ended_) return;
  if (m.type == messages::kWorkerFailed) {
    if (auto report = messages::decode_failure(m)) on_failure(*report, static_cast<long>(m.generation));
  } else if (m.type == messages::kNodeFinished) {
    on_node_finished(node_rank, static_cast<long>(m.generation), messages::int_field(m, "exit_code", 1));
  } else if (m.type == messages::kNodeProblem) {
    std::string what = messages::field(m, "message", "unspecified problem");
    last_error_by_node_[node_rank] = what;
    spdlog::error("node {}: {}", node_rank, what);
    if (!decided_) order_stop(messages::int_field(m, "exit_code", 1), fmt::format("node {}: {}", node_rank, what));
  } else if (m.type == messages::kWorkerStates) {
    worker_states_[node_rank] = NodeStates{messages::field(m, "host"), static_cast<long>(m.generation),
                                           messages::field(m, "states"), std::chrono::steady_clock::now()};
  } else if (m.type == messages::kNodeReport) {
    on_doctor_report(node_rank, m);
  }
}

void JobCoordinator::on_failure(const messages::FailureReport& report, long generation) {
  if (generation != generation_) return;  // a straggler from a generation already replaced
  ++failure_count_;
  last_error_by_node_[report.failure.node_rank] = describe_failure_line(report);
  if (mentions_port_in_use(report.failure)) port_at_fault_ = true;
  spdlog::error("failure: {}", describe_failure_line(report));
  if (!first_failure_) first_failure_ = report;
  if (decided_) return;
  const WorkerFailure& f = report.failure;
  const RestartSettings& policy = settings_.config.restart;
  bool restartable = f.kind != "spawn_failed" && ((f.phase == FailurePhase::Init && policy.on_init_failure) ||
                                                  (f.phase == FailurePhase::Runtime && policy.on_runtime_failure));
  if (restartable && restarts_used_ < policy.max_restarts) {
    order_restart(report);
    return;
  }
  std::string why = !restartable ? (f.kind == "spawn_failed" ? "the program could not be started (not restartable)"
                                                             : "restart_on does not include this phase")
                                 : fmt::format("all {} restarts used", policy.max_restarts);
  spdlog::error("not restarting: {}", why);
  order_stop(failure_exit_code(f), describe_failure_line(report));
}

void JobCoordinator::order_restart(const messages::FailureReport& cause) {
  decided_ = true;
  ++restarts_used_;
  const RestartSettings& policy = settings_.config.restart;
  double delay = std::min(policy.backoff_max_s, policy.backoff_s * std::pow(2.0, restarts_used_ - 1));
  if (delay > 0 && policy.jitter > 0) {
    static std::mt19937 rng{std::random_device{}()};
    delay += std::uniform_real_distribution<double>(0, delay * policy.jitter)(rng);
  }
  const long next = generation_ + 1;
  spdlog::warn("restarting the whole group on every node: generation {} (restart {} of {}) after {:.2f} s, because {}",
               next, restarts_used_, policy.max_restarts, delay, describe_failure_line(cause));
  backoff_timer_.expires_after(std::chrono::microseconds(static_cast<long long>(delay * 1e6)));
  backoff_timer_.async_wait([this, next, reason = describe_failure_line(cause)](const boost::system::error_code& ec) {
    if (ec || ended_ || !server_) return;
    server_->begin_generation(static_cast<std::uint64_t>(next));
    server_->broadcast(messages::make_message(messages::kRestart, next, {{"reason", reason}}));
  });
}

void JobCoordinator::order_stop(int exit_code, const std::string& reason) {
  decided_ = true;
  stop_exit_code_ = exit_code;
  if (server_)
    server_->broadcast(messages::make_message(messages::kStop, generation_,
                                              {{"reason", reason}, {"exit_code", std::to_string(exit_code)}}));
}

void JobCoordinator::on_node_finished(int node_rank, long generation, int exit_code) {
  if (generation != generation_) return;
  finished_nodes_.insert(node_rank);
  if (exit_code != 0 && finished_exit_code_ == 0) finished_exit_code_ = exit_code;
  if (static_cast<int>(finished_nodes_.size()) < node_count_) return;
  if (decided_ && !stop_exit_code_) return;  // a restart is on its way
  end_job(stop_exit_code_.value_or(finished_exit_code_));
}

void JobCoordinator::on_node_lost(const rendezvous::NodeRecord& node, const std::string& why) {
  if (ended_) return;
  std::string what = fmt::format("node {} ({}, {}) was lost: {}", node.node_rank, node.facts.hostname,
                                 node.observed_address, why);
  last_error_by_node_[node.node_rank] = what;
  spdlog::error("{}; stopping the workers on every other node", what);
  if (!stop_exit_code_) {
    backoff_timer_.cancel();  // a pending restart cannot happen without that node
    order_stop(1, what);
  }
  finished_nodes_.insert(node.node_rank);
  if (static_cast<int>(finished_nodes_.size()) >= node_count_) end_job(*stop_exit_code_);
}

void JobCoordinator::end_job(int exit_code) {
  ended_ = true;
  const LaunchConfig& c = settings_.config;
  if (exit_code != 0 && first_failure_)
    spdlog::error("{}", describe_root_cause(*first_failure_, failure_count_ - 1, generation_, restarts_used_,
                                            c.restart.max_restarts));
  else if (exit_code == 0 && !settings_.doctor)
    spdlog::info("job succeeded: {} node(s), generation {}, {} restart(s)", node_count_, generation_, restarts_used_);
  if (server_)
    server_->broadcast(messages::make_message(messages::kJobEnd, generation_, {{"exit_code", std::to_string(exit_code)}}));
}

void JobCoordinator::on_doctor_report(int node_rank, const rendezvous::Message& m) {
  doctor_rows_[node_rank] = m;
  if (static_cast<int>(doctor_rows_.size()) < node_count_) return;
  const std::string row_format = "{:<5} {:<16} {:<16} {:<8} {:<6} {:<5} {:<5} {:<10} {:<10} {:<9} {}\n";
  std::string table = fmt::format(fmt::runtime(row_format), "node", "host", "address", "nic", "port", "nproc", "gpus",
                                  "driver", "nccl", "launcher", "verdict");
  bool all_ok = true;
  for (const auto& node : nodes_) {
    auto row = doctor_rows_.find(node.node_rank);
    if (row == doctor_rows_.end()) continue;
    const bool ok = messages::field(row->second, "ok") == "1";
    all_ok = all_ok && ok;
    auto or_dash = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
    table += fmt::format(fmt::runtime(row_format), node.node_rank, node.facts.hostname, node.observed_address,
                         messages::field(row->second, "nic", "-"), worker_port_, node.facts.nproc, node.facts.gpu_count,
                         or_dash(node.facts.driver_version), or_dash(node.facts.nccl_version),
                         or_dash(node.facts.launcher_version),
                         ok ? "ok" : "FAIL: " + messages::field(row->second, "problems"));
  }
  std::printf("%s", table.c_str());
  std::printf("timeout: %s\n", timeout_explained_.c_str());
  std::printf("%s\n", all_ok ? "doctor: the job would start." : "doctor: the job would NOT start (see FAIL rows).");
  std::fflush(stdout);
  end_job(all_ok ? 0 : 1);
}

std::string JobCoordinator::status_text() const {
  std::string s = fmt::format("job {}  generation {}  restarts {}/{}  timeout {:g} s  worker port {}\n",
                              settings_.config.job_id, generation_, restarts_used_,
                              settings_.config.restart.max_restarts, timeout_s_, worker_port_);
  s += fmt::format("{:<5} {:<20} {:<16} {:<6} {:<8} {}\n", "node", "host", "address", "nproc", "rtt_ms", "last error");
  for (const auto& n : nodes_) {
    auto err = last_error_by_node_.find(n.node_rank);
    s += fmt::format("{:<5} {:<20} {:<16} {:<6} {:<8.2f} {}\n", n.node_rank, n.facts.hostname, n.observed_address,
                     n.facts.nproc, n.rtt_ms, err == last_error_by_node_.end() ? "-" : err->second);
  }
  s += fmt::format("\n{:<6} {:<5} {:<20} {:<8} {:<14} {:<4} {:<9} {}\n", "rank", "node", "host", "pid", "state", "gen",
                   "restarts", "last report");
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [node, report] : worker_states_) {
    const double age = std::chrono::duration<double>(now - report.received).count();
    std::istringstream lines(report.states);
    for (std::string rank, pid, state; lines >> rank >> pid >> state;)
      s += fmt::format("{:<6} {:<5} {:<20} {:<8} {:<14} {:<4} {:<9} {:.1f} s ago\n", rank, node, report.host, pid, state,
                       report.generation, restarts_used_, age);
  }
  return s;
}

}  // namespace ddplaunch
