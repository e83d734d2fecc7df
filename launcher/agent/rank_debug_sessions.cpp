// RankDebugSessions: the node's ranks' debuggers ↔ the master's debug console.
#include "agent/rank_debug_sessions.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "wire/launcher_messages.h"
#include "debug/debug_console.h"

namespace ddplaunch {

RankDebugSessions::RankDebugSessions(boost::asio::io_context& io, std::string hostname, RankDebugSeams seams)
    : io_(io), hostname_(std::move(hostname)), seams_(seams) {}

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
    seams_.keyboard.type_line(w.global_rank, "continue");
    return;
  }
  seams_.master.send(messages::encode(seams_.master.generation(),
                               messages::DebugStopped{w.global_rank, w.local_rank,
                                                      w.debugger.pid() > 0 ? w.debugger.pid() : w.process.pid(), hostname_, where.file,
                                                      where.function, where.code, reason, where.line}));
}

void RankDebugSessions::on_output(const Worker& w, const std::string& lines, bool prompt) {
  if (!master_proven_) return;  // a debugger's output may hold anything the rank knows
  seams_.master.send(messages::encode(seams_.master.generation(), messages::DebugOutput{w.global_rank, lines, prompt}));
}

void RankDebugSessions::on_left(const Worker& w) {
  if (!master_proven_) return;
  seams_.master.send(messages::encode(seams_.master.generation(), messages::DebugResumed{w.global_rank}));
}

void RankDebugSessions::on_rank_prompt(const Worker& w, const std::string& shown, bool secret) {
  if (!master_proven_) return;  // nobody may answer it from there
  messages::DebugOutput asked{w.global_rank, shown, true};
  asked.asks = true;
  asked.secret = secret;
  seams_.master.send(messages::encode(seams_.master.generation(), asked));
}

bool RankDebugSessions::may_carry_out(Generation generation, int rank, const char* what) {
  if (!master_proven_) {
    spdlog::warn("refused {} for rank {}: this job has no rendezvous token, so its master proved nothing and this "
                 "node carries out no debugger order from it (set DDPLAUNCH_TOKEN or --token-file on every node)",
                 what, rank);
    return false;
  }
  return generation == seams_.master.generation();  // an order of another generation names ranks that are gone
}

// The rank is "debugging" (deadlines held) while gdb holds it.
void RankDebugSessions::attach_gdb(Generation order_generation, int rank) {
  if (!may_carry_out(order_generation, rank, "an order to attach gdb")) return;
  std::shared_ptr<Worker> worker = seams_.node.worker_of_rank(rank);
  if (!worker) return;  // another node's rank
  auto say = [this, rank](const std::string& text) {
    seams_.master.send(messages::encode(seams_.master.generation(), messages::DebugOutput{rank, text + "\n", false}));
  };
  if (worker->process.status() || worker->process.pid() <= 0) return say(fmt::format("rank {} is not running: no gdb", rank));
  if (gdb_sessions_.count(rank)) return say(fmt::format("gdb is attached to rank {} already", rank));
  const Generation generation = seams_.master.generation();
  GdbSessionCallbacks callbacks;
  callbacks.on_first_prompt = [this, worker, generation](const std::string& lines) {
    seams_.master.send(messages::encode(
        generation, messages::DebugStopped{worker->global_rank, worker->local_rank, worker->process.pid(), hostname_, "", "", "",
                                           std::string(debug::StoppedRank::kGdbReason), 0}));
    if (!lines.empty())
      seams_.master.send(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, true}));
    seams_.events.publish(node_event::GdbHoldChanged{*worker, true});
  };
  callbacks.on_output = [this, worker, generation](const std::string& lines, bool prompt) {
    seams_.master.send(messages::encode(generation, messages::DebugOutput{worker->global_rank, lines, prompt}));
  };
  callbacks.on_exit = [this, worker, rank, generation] {
    seams_.master.send(messages::encode(generation, messages::DebugResumed{rank}));
    seams_.events.publish(node_event::GdbHoldChanged{*worker, false});
    boost::asio::post(io_, [this, rank] { gdb_sessions_.erase(rank); });  // not from inside its own callback
  };
  auto session = std::make_shared<GdbSession>(io_, worker->process.pid(), std::move(callbacks));
  if (std::string error = session->start(); !error.empty()) return say(error);
  gdb_sessions_[rank] = session;
}

void RankDebugSessions::input(Generation generation, int rank, const std::string& line) {
  if (!seams_.node.worker_of_rank(rank)) return;  // a line for a rank that asked nothing goes to every node; its own takes it
  if (!may_carry_out(generation, rank, "a line for a debugger")) return;
  if (auto session = gdb_sessions_.find(rank); session != gdb_sessions_.end()) {
    session->second->input(line);
    return;
  }
  if (!seams_.keyboard.type_line(rank, line))
    spdlog::warn("a line typed for rank {} was not delivered: its stdin is closed or {} KiB are still unread",
                 rank, Worker::kMaxStdinQueue / 1024);
}

void RankDebugSessions::close() {
  for (auto& [rank, session] : gdb_sessions_) session->close();
  gdb_sessions_.clear();
}

}  // namespace ddplaunch
