// The ssh process set of a fan-out: see ssh_sessions.h.
#include "fanout/ssh_sessions.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <optional>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "output/line_splitter.h"
#include "supervise/process_spawner.h"

namespace ddplaunch::fanout {

struct SshSessions::Session {
  Session(boost::asio::io_context& io, int index) : index(index), in(io), out(io), err(io), deadline(io) {}
  int index;
  pid_t pid = -1;
  boost::asio::posix::stream_descriptor in, out, err;
  std::string unsent_in;  // written to `in` as the pipe takes it, in order
  LineSplitter out_lines, err_lines;
  char out_buffer[4096], err_buffer[4096];
  int open_pipes = 2;
  boost::asio::steady_timer deadline;
  bool timed_out = false;
  std::optional<ExitStatus> status;
  bool reported = false;
};

SshSessions::SshSessions(boost::asio::io_context& io, SessionCallbacks callbacks)
    : io_(io), callbacks_(std::move(callbacks)), child_exits_(io, SIGCHLD) {
  wait_for_children();
}

SshSessions::~SshSessions() {
  kill_all(SIGKILL);
  for (auto& s : sessions_) {
    if (s->pid > 0 && !s->status) waitpid(s->pid, nullptr, 0);
    boost::system::error_code ignored;
    s->in.close(ignored);  // a pending write wait ends as aborted, touching nothing of this
  }
}

std::string SshSessions::start(int index, const std::vector<std::string>& argv, const std::vector<std::string>& env,
                               bool with_stdin, std::chrono::milliseconds deadline) {
  if (closed_) return "the fan-out is shutting down";
  SpawnRequest request;
  request.argv = argv;
  request.env = env;
  request.stdin_pipe = with_stdin;
  SpawnedProcess spawned = spawn_worker_process(request);
  if (!spawned.error.empty()) return spawned.error;
  auto session = std::make_shared<Session>(io_, index);
  session->pid = spawned.pid;
  if (spawned.stdin_fd >= 0) {
    fcntl(spawned.stdin_fd, F_SETFL, O_NONBLOCK);  // never block the loop on a write
    session->in.assign(spawned.stdin_fd);
  }
  session->out.assign(spawned.stdout_fd);
  session->err.assign(spawned.stderr_fd);
  sessions_.push_back(session);
  if (deadline.count() > 0) {
    session->deadline.expires_after(deadline);
    session->deadline.async_wait([session](const boost::system::error_code& ec) {
      if (ec || session->status) return;
      session->timed_out = true;
      kill(-session->pid, SIGKILL);
    });
  }
  read_output(session, true);
  read_output(session, false);
  return {};
}

std::shared_ptr<SshSessions::Session> SshSessions::find(int index) {
  for (auto& s : sessions_)
    if (s->index == index) return s;
  return nullptr;
}

bool SshSessions::write_stdin(int index, std::string_view text) {
  std::shared_ptr<Session> s = find(index);
  if (!s || !s->in.is_open() || s->unsent_in.size() + text.size() > kMaxUnsentStdin) return false;
  const bool was_idle = s->unsent_in.empty();
  s->unsent_in.append(text);
  if (was_idle) send_stdin(s);
  return true;
}

// Writes what the pipe takes now; the rest when it can take more (ssh reads its stdin as the
// connection allows). A closed pipe (ssh ended) drops the rest: its end is reported on SIGCHLD.
void SshSessions::send_stdin(const std::shared_ptr<Session>& s) {
  while (!s->unsent_in.empty() && s->in.is_open()) {
    const ssize_t n = ::write(s->in.native_handle(), s->unsent_in.data(), s->unsent_in.size());
    if (n > 0) {
      s->unsent_in.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      s->in.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                       [this, s](const boost::system::error_code& ec) {
                         if (!ec) send_stdin(s);
                       });
      return;
    } else {
      s->unsent_in.clear();
    }
  }
}

void SshSessions::close_stdin(int index) {
  std::shared_ptr<Session> s = find(index);
  if (!s) return;
  boost::system::error_code ignored;
  s->in.close(ignored);
  s->unsent_in.clear();
}

void SshSessions::kill_all(int signal) {
  for (auto& s : sessions_)
    if (s->pid > 0 && !s->status) kill(-s->pid, signal);
}

void SshSessions::close() {
  closed_ = true;
  boost::system::error_code ignored;
  child_exits_.cancel(ignored);
}

int SshSessions::running() const {
  int n = 0;
  for (const auto& s : sessions_) n += s->reported ? 0 : 1;
  return n;
}

// The one wait for children: each SIGCHLD reaps whichever sessions ended, then any other
// child (main makes this process a subreaper: an ssh's orphaned helpers end up here).
void SshSessions::wait_for_children() {
  child_exits_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    for (;;) {
      int wait_status = 0;
      pid_t pid = waitpid(-1, &wait_status, WNOHANG);
      if (pid <= 0) break;
      for (auto& s : sessions_)
        if (s->pid == pid && !s->status) {
          s->status = exit_status_from_wait(wait_status);
          s->deadline.cancel();
          maybe_finished(*s);
        }
    }
    if (!closed_) wait_for_children();
  });
}

void SshSessions::read_output(const std::shared_ptr<Session>& session, bool is_stdout) {
  auto& pipe = is_stdout ? session->out : session->err;
  char* buffer = is_stdout ? session->out_buffer : session->err_buffer;
  pipe.async_read_some(boost::asio::buffer(buffer, sizeof session->out_buffer),
                       [this, session, is_stdout, buffer](const boost::system::error_code& ec, std::size_t n) {
                         const OutputStream stream = is_stdout ? OutputStream::Stdout : OutputStream::Stderr;
                         auto emit = [&](std::string_view line) { callbacks_.on_line(session->index, stream, line); };
                         auto& lines = is_stdout ? session->out_lines : session->err_lines;
                         if (!ec) {
                           lines.feed(std::string_view(buffer, n), emit);
                           return read_output(session, is_stdout);
                         }
                         lines.finish(emit);
                         boost::system::error_code ignored;
                         (is_stdout ? session->out : session->err).close(ignored);
                         --session->open_pipes;
                         maybe_finished(*session);
                       });
}

void SshSessions::maybe_finished(Session& session) {
  if (session.reported || !session.status || session.open_pipes > 0) return;
  session.reported = true;
  boost::system::error_code ignored;
  session.in.close(ignored);
  session.unsent_in.clear();
  callbacks_.on_end(session.index, SessionEnd{*session.status, session.timed_out});
}

}  // namespace ddplaunch::fanout
