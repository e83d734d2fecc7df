// RankDebugSessions: this node's end of interactive debugging. Its ranks' debuggers (pdb in a
// rank, seen by the GroupSupervisor, or gdb attached at a person's request) talk to the
// master's debug console through debug_stopped / debug_output / debug_resumed messages; the
// console's lines (debug_input) come back here to the rank's debugger.
//
// Whoever types into a debugger runs code as this launcher's user, so the sessions answer a
// master only when it proved the job's token (or is this launcher's own rendezvous server):
// otherwise the remote console is off here — nothing of a debugger is relayed, no order to
// attach gdb or type into a rank is carried out, and a rank that stops in its debugger is
// told to continue, with a word at this node's log.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/master_link.h"
#include "agent/node_event.h"
#include "agent/node_view.h"
#include "ddplaunch/rendezvous/generation.h"
#include "debug/pdb_text.h"
#include "ddplaunch/rendezvous/types.h"
#include "supervise/gdb_session.h"
#include "supervise/worker.h"

namespace ddplaunch {

// Where a line typed for a rank goes when no gdb holds it: its pdb while it is stopped in one,
// else its own prompt (the node's GroupSupervisor). False: not delivered (not this node's
// rank, or its keyboard is full or closed).
class RankKeyboard {
 public:
  virtual bool type_line(int rank, const std::string& line) = 0;

 protected:
  ~RankKeyboard() = default;
};

// What the sessions use of their node: its master, its workers, their keyboards, and where
// they say that gdb took or freed a rank (GdbHoldChanged).
struct RankDebugSeams {
  MasterLink& master;
  const NodeView& node;
  RankKeyboard& keyboard;
  NodeEvents& events;
};

class RankDebugSessions {
 public:
  RankDebugSessions(boost::asio::io_context& io, std::string hostname, RankDebugSeams seams);
  // At every join: whether the master this node takes orders from proved the job's token, or
  // is this launcher's own (master_may_reach_ranks). Until then: not.
  void set_master_proven(bool proven) { master_proven_ = proven; }
  bool master_proven() const { return master_proven_; }

  // A rank's pdb, as the GroupSupervisor sees it: stopped, its output, left.
  void on_stopped(const Worker& worker, const debug::StopLocation& where, const std::string& reason);
  void on_output(const Worker& worker, const std::string& lines, bool prompt);
  void on_left(const Worker& worker);
  // A rank's own prompt (input(), getpass) waits for a line, as shown; "" when no longer.
  void on_rank_prompt(const Worker& worker, const std::string& shown, bool secret);
  // `:attach R --gdb` of generation `generation`: when R is this node's rank of the current
  // generation, gdb on it, relayed like its pdb would be.
  void attach_gdb(Generation generation, int rank);
  // A console line of generation `generation` for rank `rank`: its gdb, else its pdb while
  // the rank is stopped in it, else the answer to its own prompt (its stdin).
  void input(Generation generation, int rank, const std::string& line);
  void close();  // the node is finishing: every gdb goes

 private:
  boost::asio::io_context& io_;
  std::string hostname_;
  bool master_proven_ = false;
  int stops_continued_ = 0;  // stops answered with "continue" because the remote console is off
  RankDebugSeams seams_;
  // Whether an order of `generation` may be carried out here (said at the log when not).
  bool may_carry_out(Generation generation, int rank, const char* what);
  std::map<int, std::shared_ptr<GdbSession>> gdb_sessions_;  // by rank: gdb attached at a person's request
};

}  // namespace ddplaunch
