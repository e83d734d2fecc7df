// GdbSession: gdb attached to one worker at a person's request (`:attach R --gdb` at the debug
// console), for native workers (a C++ train_binary) and wedged ranks. gdb runs as this
// launcher's child with a pipe for stdin; its output is read a line at a time and its "(gdb) "
// prompt found as a rank's pdb prompt is (debug/pdb_text.h), so it is relayed to the console
// the same way. `c` / `q` at its prompt detach gdb and the rank runs on.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "output/line_splitter.h"

namespace ddplaunch {

struct GdbSessionCallbacks {
  std::function<void(const std::string& lines_before)> on_first_prompt;  // gdb is attached and waits
  std::function<void(const std::string& lines, bool prompt)> on_output;
  std::function<void()> on_exit;  // gdb ended (detached, or could not attach)
};

class GdbSession : public std::enable_shared_from_this<GdbSession> {
 public:
  GdbSession(boost::asio::io_context& io, pid_t target, GdbSessionCallbacks callbacks);
  ~GdbSession();
  // "" or why gdb could not be started.
  std::string start();
  // A line typed at the console for gdb: resume and quit commands detach it.
  void input(const std::string& line);
  void close();  // the node is finishing: gdb goes (the rank is detached by its exit)

 private:
  void read(bool is_stdout);
  void on_line(std::string_view line);
  void after_chunk();
  void write_queued();

  boost::asio::io_context& io_;
  pid_t target_;
  GdbSessionCallbacks callbacks_;
  pid_t pid_ = -1;
  boost::asio::posix::stream_descriptor out_, err_, in_;
  LineSplitter out_lines_, err_lines_;
  std::string pending_;  // output lines not sent yet
  std::string queue_;    // input not written yet
  bool writing_ = false;
  bool prompted_ = false;
  int open_streams_ = 0;
  char out_buffer_[4096], err_buffer_[4096];
};

}  // namespace ddplaunch
