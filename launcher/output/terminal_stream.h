// One of the launcher's output streams (fd 1 or 2) as the terminal queue's writer sees it.
//
// A pipe or a terminal is written through a descriptor of its own, opened again from
// /proc/self/fd/N, with O_NONBLOCK set on it alone (the shell and the other processes that
// share fd N keep their blocking descriptor): the writer waits in poll() and can always be
// woken, so it knows to the byte how much the reader took. Anything else (a file, a socket,
// no /proc) is written through fd N itself, in pieces of at most PIPE_BUF after poll() said
// it is writable.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string_view>

namespace ddplaunch {

class TerminalStream {
 public:
  explicit TerminalStream(int fd) : fd_(fd) {}

  enum class Outcome { Wrote, Woken, TimedOut, Failed };
  struct Step {
    Outcome outcome;
    std::size_t bytes = 0;  // when Wrote
  };
  // Waits until the stream takes some of `text` (at most `patience`; forever when negative)
  // or `wake_fd` (-1: none) is readable, then writes what it takes.
  Step write_some(std::string_view text, int wake_fd, std::chrono::milliseconds patience);

  // In the process that writes the rest after the launcher (terminal_writer.cpp): this stream's
  // descriptor becomes fd N itself, so that every other descriptor can be closed.
  void become_the_stream();

 private:
  int writable_fd();  // the private descriptor, (re)opened when fd N names another file

  int fd_;
  int own_ = -1;             // the private non-blocking descriptor, -1 when there is none
  dev_t device_ = 0;         // the file fd N named when own_ was opened
  ino_t inode_ = 0;
  bool checked_ = false;
};

}  // namespace ddplaunch
