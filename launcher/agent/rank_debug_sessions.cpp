// RankDebugSessions: the node's ranks' debuggers ↔ the master's debug console.
#include "agent/rank_debug_sessions.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "debug/debug_console.h"

namespace ddplaunch {

RankDebugSessions::RankDebugSessions(boost::asio::io_context& io, std::string hostname, RankDebugHooks hooks)
    : io_(io), hostname_(std::move(hostname)), hooks_(std::move(hooks)) {}

void RankDebugSessions::on_stopped(const Worker& w, const debug::StopLocation& where, const std::string& reason) {
  if (!master_proven_) {
    // No console can answer it (and none may): the rank goes on as an unattended stop does.
    if (stops_continued_++ == 0)
      spdlog::warn("rank {} stopped in its debugger at {}:{}, but this job has no rendezvous token, so this node "
                   "takes no debugger orders from its master (anyone who reached the master's port first could pose "
                   "as it and type into the rank): the rank continues, and so will its later stops. Start the job "
                   "with DDPLAUNCH_TOKEN or --token-file (--hosts and ddplaunch-srun make one) to debug ranks on "
                   "every node",
                   w.global_rank, where.file, where.line);
    hooks_.pdb_input(w.global_rank, "continue");
    return;
  }
  hooks_.send(messages::encode(hooks_.generation(),
                               messages::DebugStopped{w.global_rank, w.local_rank,
                                                      w.debugger.pid() > 0 ? w.debugger.pid() : w.process.pid(), hostname_, where.file,
                                                      where.function, where.code, reason, where.line}));
}

void RankDebugSessions::on_output(const Worker& w, const std::string& lines, bool prompt) {
  if (!master_proven_) return;  // a debugger's output may hold anything the rank knows
  hooks_.send(messages::encode(hooks_.generation(), messages::DebugOutput{w.global_rank, lines, prompt}));
}

void RankDebugSessions::on_left(const Worker& w) {
  if (!master_proven_) return;
  hooks_.send(messages::encode(hooks_.generation(), messages::DebugResumed{w.global_rank}));
}

void RankDebugSessions::on_rank_prompt(const Worker& w, const std::string& shown, bool secret) {
  if (!master_proven_) return;  // nobody may answer it from there
  messages::DebugOutput asked{w.global_rank, shown, true};
  asked.asks = true;
  asked.secret = secret;
  hooks_.send(messages::encode(hooks_.generation(), asked));
}

bool RankDebugSessions::may_carry_out(Generation generation, int rank, const char* what) {
  if (!master_proven_) {
    spdlog::warn("refused {} for rank {}: this job has no rendezvous token, so its master proved nothing and this "
                 "node carries out no debugger order from it (set DDPLAUNCH_TOKEN or --token-file on every node)",
                 what, rank);
    return false;
  }
  return generation == hooks_.generation();  // an order of another generation names ranks that are gone
}

// The rank is "debugging" (deadlines held) while gdb holds it.
void RankDebugSessions::attach_gdb(Generation order_generation, int rank) {
  if (!may_carry_out(order_generation, rank, "an order to attach gdb")) return;
  const auto& workers = hooks_.workers();
  auto found = std::find_if(workers.begin(), workers.end(), [&](const auto& w) { return w->global_rank == rank; });
  if (found == workers.end()) return;  // another node's rank
  std::shared_ptr<Worker> worker = *found;
  auto say = [this, rank](const std::string& text) {
    hooks_.send(messages::encode(hooks_.generation(), messages::DebugOutput{rank, text + "\n", false}));
  };
  if (worker->process.status() || worker->process.pid() <= 0) return say(fmt::format("rank {} is not running: no gdb", rank));
  if (gdb_sessions_.count(rank)) return say(fmt::format("gdb is attached to rank {} already", rank));
  const Generation generation = hooks_.generation();
  GdbSessionCallbacks callbacks;
  callbacks.on_first_prompt = [this, worker, generation](const std::string& lines) {
    hooks_.send(messages::encode(
        generation, messages::DebugStopped{worker->global_rank, worker->local_rank, worker->process.pid(), hostname_, "", "", "",
                                           std::string(debug::StoppedRank::kGdbReason), 0}));
    if (!lines.empty())
      hooks_.send(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, true}));
    hooks_.gdb_attached(*worker, true);
  };
  callbacks.on_output = [this, worker, generation](const std::string& lines, bool prompt) {
    hooks_.send(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, prompt}));
  };
  callbacks.on_exit = [this, worker, rank, generation] {
    hooks_.send(messages::encode(generation, messages::DebugResumed{rank}));
    hooks_.gdb_attached(*worker, false);
    boost::asio::post(io_, [this, rank] { gdb_sessions_.erase(rank); });  // not from inside its own callback
  };
  auto session = std::make_shared<GdbSession>(io_, worker->process.pid(), std::move(callbacks));
  if (std::string error = session->start(); !error.empty()) return say(error);
  gdb_sessions_[rank] = session;
}

void RankDebugSessions::input(Generation generation, int rank, const std::string& line) {
  const auto& workers = hooks_.workers();
  const bool ours = std::any_of(workers.begin(), workers.end(), [&](const auto& w) { return w->global_rank == rank; });
  if (!ours) return;  // a line for a rank that asked nothing goes to every node; its own takes it
  if (!may_carry_out(generation, rank, "a line for a debugger")) return;
  if (auto session = gdb_sessions_.find(rank); session != gdb_sessions_.end()) {
    session->second->input(line);
    return;
  }
  if (!hooks_.pdb_input(rank, line))
    spdlog::warn("a line typed for rank {} was not delivered: its stdin is closed or {} KiB are still unread",
                 rank, Worker::kMaxStdinQueue / 1024);
}

void RankDebugSessions::close() {
  for (auto& [rank, session] : gdb_sessions_) session->close();
  gdb_sessions_.clear();
}

}  // namespace ddplaunch
