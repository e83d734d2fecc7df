// The fan-out's running nodes: see fanout_job.h.
#include "fanout/fanout_job.h"

#include <unistd.h>

#include <csignal>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "debug/console_relay.h"
#include "fanout/node_relay.h"
#include "fanout/rank_line.h"
#include "policy/fanout_policy.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch::fanout {

namespace {
std::string how_it_ended(const SessionEnd& end) {
  if (!end.status.signaled && ssh_session_failed(end.status)) return "its ssh connection failed (ssh exit 255)";
  return end.status.describe();
}
}  // namespace

FanoutJob::FanoutJob(boost::asio::io_context& io, std::vector<FanoutNode> nodes, std::string token, double grace_s,
                     bool collapse)
    : io_(io),
      nodes_(std::move(nodes)),
      token_(std::move(token)),
      grace_s_(grace_s),
      sessions_(io, SessionCallbacks{[this](int n, OutputStream s, std::string_view l) { on_line(n, s, l); },
                                     [this](int n, const SessionEnd& e) { on_end(n, e); }}),
      signals_(io, SIGINT, SIGTERM),
      stop_bound_(io),
      settle_(io),
      printer_(io, kAcrossNodesWindow) {
  signals_.add(SIGHUP);
  printer_.start(collapse, 0, static_cast<int>(nodes_.size()));
}

std::string FanoutJob::start(const std::vector<std::string>& env) {
  wait_for_signals();
  for (const FanoutNode& node : nodes_) {
    std::string error = sessions_.start(node.node_rank, node.ssh_argv, env, true, std::chrono::milliseconds(0));
    if (error.empty() && !sessions_.write_stdin(node.node_rank, token_ + "\n" + node.environment_block))
      error = "could not hand over the token and variables on its stdin";
    if (!error.empty()) {
      stop_nodes(SIGTERM, fmt::format("node {} ({}) could not be started", node.node_rank, node.host));
      finish_when_done();  // none started: nothing to wait for
      return fmt::format("cannot start ssh for node {} ({}): {}", node.node_rank, node.host, error);
    }
  }
  spdlog::info("started {} node(s) over ssh: {}", nodes_.size(), [&] {
    std::string list;
    for (const auto& n : nodes_) list += fmt::format("{}node {} = {}", list.empty() ? "" : ", ", n.node_rank, n.host);
    return list;
  }());
  return {};
}

int FanoutJob::exit_code() const { return fanout_exit_code(master_code_); }

void FanoutJob::on_line(int node, OutputStream stream, std::string_view line) {
  if (stream == OutputStream::Stdout && relay_console_line(node, line)) return;
  if (auto rank_line = parse_rank_line(line); rank_line && rank_line->node == node) {
    printer_.note_node(rank_line->rank, node);
    printer_.print(rank_line->rank, fmt::format("[node {} rank {}]", node, rank_line->rank), " ", stream,
                   rank_line->text);
    return;
  }
  printer_.flush();  // the nodes' own lines (a restart, the job's end) after the workers' lines before them
  std::string prefix = relay_prefix(node, nodes_.at(node).host, line);
  if (prefix.empty()) write_line(stream, line);
  else write_prefixed_line(stream, prefix, line);
}

void FanoutJob::on_end(int node, const SessionEnd& end) {
  const FanoutNode& n = nodes_.at(node);
  const FanoutEndDecision d = decide_fanout_node_end({node, end.status, stopping_, sessions_.running()});
  if (d.job_exit_code) master_code_ = d.job_exit_code;
  if (d.say != FanoutEndDecision::Say::Nothing)
    spdlog::log(d.say == FanoutEndDecision::Say::Error ? spdlog::level::err : spdlog::level::info,
                "node {} ({}) ended: {}", node, n.host, how_it_ended(end));
  if (d.stop_others_after) {
    settle_.expires_after(*d.stop_others_after);
    settle_.async_wait([this, node, why = how_it_ended(end)](const boost::system::error_code& ec) {
      if (!ec && sessions_.running() > 0)
        stop_nodes(SIGTERM, fmt::format("node {} ({}) ended ({})", node, nodes_.at(node).host, why));
    });
  }
  finish_when_done();
}

void FanoutJob::wait_for_signals() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    if (++interrupts_ > 1) {
      spdlog::warn("{} again: every node kills its workers now", signal_name(signal));
      for (const auto& n : nodes_) sessions_.write_stdin(n.node_rank, signal_name(signal) + "\n");
    } else {
      stop_nodes(signal, fmt::format("received {}", signal_name(signal)));
    }
    wait_for_signals();
  });
}

// Each node's ddplaunch takes the line as that signal (stdin_control.h): it stops its workers
// (SIGTERM, SIGKILL after the grace) and tells the master. A node that has not ended after
// the grace plus a bound is given up: its ssh is killed, and its ddplaunch, seeing stdin end,
// stops too.
void FanoutJob::stop_nodes(int signal, const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  spdlog::warn("{}: stopping every node ({} to each; their workers get SIGTERM, SIGKILL after {:g} s)", why,
               signal_name(signal), grace_s_);
  for (const auto& n : nodes_) sessions_.write_stdin(n.node_rank, signal_name(signal) + "\n");
  const double bound_s = fanout_stop_bound_s(grace_s_);
  stop_bound_.expires_after(seconds_to_ms(bound_s));
  stop_bound_.async_wait([this, bound_s](const boost::system::error_code& ec) {
    if (ec || sessions_.running() == 0) return;
    spdlog::error("{} node(s) still running {:g} s after the stop: closing their ssh connections", sessions_.running(),
                  bound_s);
    sessions_.kill_all(SIGKILL);
  });
}

void FanoutJob::finish_when_done() {
  if (sessions_.running() > 0) return;
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  stop_bound_.cancel();
  settle_.cancel();
  printer_.close();
  sessions_.close();
  if (console_) console_->close();
}

// The master (node 0) writes its debug console as marked lines (debug/console_relay.h).
bool FanoutJob::relay_console_line(int node, std::string_view line) {
  if (node != 0) return false;
  auto relayed = debug::parse_relayed_console_line(line);
  if (!relayed) return false;
  if (!console_tried_) {
    console_tried_ = true;
    console_ = ConsoleTerminal::open(io_, ConsoleInput{
                                              .on_line = [this](const std::string& l) { send_console_line(l); },
                                              .on_end_of_input = [this] { send_console_line("q"); },
                                              .on_interrupt = [] { ::kill(::getpid(), SIGINT); },
                                          });
  }
  switch (relayed->kind) {
    case debug::RelayedConsoleLine::Kind::Text:
      if (console_) console_->print(relayed->text + "\n");
      else write_line(OutputStream::Stdout, relayed->text);
      break;
    case debug::RelayedConsoleLine::Kind::Prompt:
      if (console_) console_->set_prompt(relayed->text);
      else if (!relayed->text.empty())
        write_line(OutputStream::Stdout, relayed->text + "(no terminal here: type with `ddplaunch debug` on a terminal)");
      break;
    case debug::RelayedConsoleLine::Kind::NoPrompt:
      if (console_) console_->set_prompt(std::nullopt);
      break;
  }
  return true;
}

void FanoutJob::send_console_line(const std::string& line) {
  sessions_.write_stdin(0, std::string(debug::kConsoleInputMark) + line + "\n");
}

}  // namespace ddplaunch::fanout
