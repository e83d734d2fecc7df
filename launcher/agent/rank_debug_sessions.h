// RankDebugSessions: this node's end of interactive debugging. Its ranks' debuggers (pdb in a
// rank, seen by the GroupSupervisor, or gdb attached at a person's request) talk to the
// master's debug console through debug_stopped / debug_output / debug_resumed messages; the
// console's lines (debug_input) come back here to the rank's debugger.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "ddplaunch/rendezvous/generation.h"
#include "debug/pdb_text.h"
#include "ddplaunch/rendezvous/types.h"
#include "supervise/gdb_session.h"
#include "supervise/worker.h"

namespace ddplaunch {

// What the sessions ask of their node.
struct RankDebugHooks {
  std::function<void(const rendezvous::Message&)> send;  // to the master, when the node has one
  std::function<const std::vector<std::shared_ptr<Worker>>&()> workers;
  std::function<bool(int rank, const std::string& line)> pdb_input;  // false: the rank is not in its pdb
  std::function<Generation()> generation;
  std::function<void()> ranks_changed;  // gdb took or freed a rank: its state is "debugging" or not
};

class RankDebugSessions {
 public:
  RankDebugSessions(boost::asio::io_context& io, std::string hostname, RankDebugHooks hooks);

  // A rank's pdb, as the GroupSupervisor sees it: stopped, its output, left.
  void on_stopped(const Worker& worker, const debug::StopLocation& where, const std::string& reason);
  void on_output(const Worker& worker, const std::string& lines, bool prompt);
  void on_left(const Worker& worker);
  // `:attach R --gdb`: when R is this node's, gdb on it, relayed like its pdb would be.
  void attach_gdb(int rank);
  // A console line for rank `rank`'s debugger: its gdb, else its pdb.
  void input(int rank, const std::string& line);
  void close();  // the node is finishing: every gdb goes

 private:
  boost::asio::io_context& io_;
  std::string hostname_;
  RankDebugHooks hooks_;
  std::map<int, std::shared_ptr<GdbSession>> gdb_sessions_;  // by rank: gdb attached at a person's request
};

}  // namespace ddplaunch
