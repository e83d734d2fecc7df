// A relayed gdb session on one worker.
#include "supervise/gdb_session.h"

#include <signal.h>

#include <utility>

#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "debug/pdb_text.h"
#include "supervise/process_spawner.h"

extern char** environ;

namespace ddplaunch {

GdbSession::GdbSession(boost::asio::io_context& io, pid_t target, GdbSessionCallbacks callbacks)
    : io_(io), target_(target), callbacks_(std::move(callbacks)), out_(io), err_(io), in_(io) {}

GdbSession::~GdbSession() { close(); }

std::string GdbSession::start() {
  SpawnRequest request;
  // Paging, confirmations and line wrapping are a terminal's: the console edits the lines.
  request.argv = {"gdb", "-q", "-nx", "-p", std::to_string(target_), "-ex", "set pagination off",
                  "-ex", "set confirm off", "-ex", "set width 0"};
  for (char** e = environ; *e; ++e) request.env.emplace_back(*e);
  request.stdin_pipe = true;
  SpawnedProcess process = spawn_worker_process(request);
  if (process.pid < 0) return fmt::format("cannot start gdb on this node: {} (install gdb)", process.error);
  pid_ = process.pid;
  out_.assign(process.stdout_fd);
  err_.assign(process.stderr_fd);
  in_.assign(process.stdin_fd);
  open_streams_ = 2;
  read(true);
  read(false);
  return {};
}

void GdbSession::close() {
  boost::system::error_code ignored;
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  pid_ = -1;
  out_.close(ignored);
  err_.close(ignored);
  in_.close(ignored);
}

void GdbSession::read(bool is_stdout) {
  auto& stream = is_stdout ? out_ : err_;
  char* buffer = is_stdout ? out_buffer_ : err_buffer_;
  stream.async_read_some(boost::asio::buffer(buffer, sizeof out_buffer_),
                         [self = shared_from_this(), is_stdout](const boost::system::error_code& ec, std::size_t n) {
                           auto emit = [&](std::string_view line) { self->on_line(line); };
                           auto& lines = is_stdout ? self->out_lines_ : self->err_lines_;
                           if (!ec) {
                             lines.feed(std::string_view(is_stdout ? self->out_buffer_ : self->err_buffer_, n), emit);
                             self->after_chunk();
                             self->read(is_stdout);
                             return;
                           }
                           lines.finish(emit);
                           if (--self->open_streams_ > 0) return;
                           if (!self->pending_.empty() && self->callbacks_.on_output)
                             self->callbacks_.on_output(std::exchange(self->pending_, {}), false);
                           if (self->callbacks_.on_exit) self->callbacks_.on_exit();
                         });
}

void GdbSession::on_line(std::string_view line) {
  if (pending_.size() < 64 * 1024) pending_.append(without_progress_mark(line)).append("\n");
}

void GdbSession::after_chunk() {
  const bool prompt = debug::debugger_prompt(out_lines_.unterminated()).has_value();
  if (prompt) out_lines_.drop_unterminated();
  if (prompt && !prompted_) {
    prompted_ = true;
    if (callbacks_.on_first_prompt) callbacks_.on_first_prompt(std::exchange(pending_, {}));
    return;
  }
  if (prompted_ && (prompt || !pending_.empty()) && callbacks_.on_output)
    callbacks_.on_output(std::exchange(pending_, {}), prompt);
}

void GdbSession::input(const std::string& line) {
  // Resuming or quitting means "let the rank run on": gdb detaches and ends.
  const bool leave = debug::classify_debugger_command(line) != debug::DebuggerCommand::Other;
  queue_ += leave ? std::string("detach\nquit\n") : line + "\n";
  write_queued();
}

void GdbSession::write_queued() {
  if (writing_ || queue_.empty() || !in_.is_open()) return;
  writing_ = true;
  auto text = std::make_shared<std::string>(std::exchange(queue_, {}));
  boost::asio::async_write(in_, boost::asio::buffer(*text),
                           [self = shared_from_this(), text](const boost::system::error_code& ec, std::size_t) {
                             self->writing_ = false;
                             if (!ec) self->write_queued();
                           });
}

}  // namespace ddplaunch
