// The running part of a fan-out: one ssh session per node, each carrying a remote ddplaunch.
// It hands every node the token and its variables on stdin, relays their lines to this terminal, forwards
// Ctrl-C / SIGTERM to every node as a control line on stdin (and gives up on a node after
// the grace plus a bound), stops the others when a node ends badly, and ends with the
// job's exit status: the master node's.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "console/console_terminal.h"
#include "fanout/ssh_sessions.h"
#include "supervise/rank_line_printer.h"

namespace ddplaunch::fanout {

struct FanoutNode {
  int node_rank = 0;
  std::string host;
  std::vector<std::string> ssh_argv;
  std::string environment_block;  // the node's variables, on its stdin after the token (never in argv)
};

class FanoutJob {
 public:
  // grace_s: the nodes' SIGTERM → SIGKILL grace; a stopped node gets that plus a bound.
  // collapse: identical lines of ranks on any nodes print once, naming the ranks (the nodes
  // then print every line; see FanoutNode's command).
  FanoutJob(boost::asio::io_context& io, std::vector<FanoutNode> nodes, std::string token, double grace_s,
            bool collapse = false);

  // Starts every node (environment `env` for ssh). "" or why not; on an error the nodes
  // already started are stopped. Then run the event loop until it returns.
  std::string start(const std::vector<std::string>& env);
  int exit_code() const;

 private:
  void on_line(int node, OutputStream stream, std::string_view line);
  void on_end(int node, const SessionEnd& end);
  void wait_for_signals();
  void stop_nodes(int signal, const std::string& why);
  void finish_when_done();
  // The master's debug console, shown on this terminal: its marked lines in, typed lines out.
  bool relay_console_line(int node, std::string_view line);
  void send_console_line(const std::string& line);

  boost::asio::io_context& io_;
  std::vector<FanoutNode> nodes_;
  std::string token_;
  double grace_s_;
  SshSessions sessions_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer stop_bound_;   // after a stop: give up on the nodes still running
  boost::asio::steady_timer settle_;       // after a node failed: let the others end by themselves first
  int interrupts_ = 0;
  bool stopping_ = false;
  std::optional<int> master_code_;
  std::unique_ptr<ConsoleTerminal> console_;  // opened at the master's first console line (a terminal only)
  RankLinePrinter printer_;                   // the nodes' worker lines, merged across nodes when collapsing
  // Lines of different hosts come through ssh and the network: a wider window than a node's.
  static constexpr std::chrono::milliseconds kAcrossNodesWindow{500};
  bool console_tried_ = false;
};

}  // namespace ddplaunch::fanout
