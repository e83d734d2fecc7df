// The ssh processes of a fan-out (ninja's split: each Session is a passive record; SshSessions
// owns every wait on them in the one event loop): started in their own process group with
// stdout/stderr pipes (and a stdin pipe when asked), their lines handed over whole as they
// come, reaped on SIGCHLD, killed as a group at a deadline or on request.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "output/worker_output.h"
#include "ddplaunch/base/exit_status.h"

namespace ddplaunch::fanout {

struct SessionEnd {
  ExitStatus status;
  bool timed_out = false;  // killed at its deadline
};

struct SessionCallbacks {
  std::function<void(int index, OutputStream stream, std::string_view line)> on_line;
  std::function<void(int index, const SessionEnd& end)> on_end;  // reaped and its output drained
};

class SshSessions {
 public:
  SshSessions(boost::asio::io_context& io, SessionCallbacks callbacks);
  ~SshSessions();  // SIGKILLs and reaps whatever still runs
  SshSessions(const SshSessions&) = delete;
  SshSessions& operator=(const SshSessions&) = delete;

  // Starts `argv` as session `index` (the caller's numbering) with environment `env`
  // ("K=V"). `deadline` > 0: SIGKILL its process group then. Returns "" or why not started.
  std::string start(int index, const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    bool with_stdin, std::chrono::milliseconds deadline);
  // Queues `text` for a session's stdin, written as its pipe takes it (in order, never
  // blocking the loop); false when its stdin is closed or more than kMaxUnsentStdin would wait.
  bool write_stdin(int index, std::string_view text);
  void close_stdin(int index);
  void kill_all(int signal);  // every running session's process group
  int running() const;        // started and not yet reported ended
  void close();               // stop waiting for children, so that the event loop can return

 private:
  struct Session;
  static constexpr std::size_t kMaxUnsentStdin = 8 << 20;  // a token, the variables' block, control lines
  void send_stdin(const std::shared_ptr<Session>& session);
  void wait_for_children();
  void read_output(const std::shared_ptr<Session>& session, bool is_stdout);
  void maybe_finished(Session& session);
  std::shared_ptr<Session> find(int index);

  boost::asio::io_context& io_;
  SessionCallbacks callbacks_;
  boost::asio::signal_set child_exits_;
  std::vector<std::shared_ptr<Session>> sessions_;
  bool closed_ = false;  // close() was called, maybe from inside the SIGCHLD handler: do not wait again
};

}  // namespace ddplaunch::fanout
