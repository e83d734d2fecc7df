// Reassembles whole lines from the arbitrary chunks a pipe delivers, so worker output is
// always forwarded a line at a time and never interleaved mid-line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ddplaunch {

class LineSplitter {
 public:
  using LineHandler = std::function<void(std::string_view line)>;  // without the '\n'

  // Lines longer than max_line_bytes are cut into pieces of that size (bounded memory).
  explicit LineSplitter(std::size_t max_line_bytes = 64 * 1024) : max_line_bytes_(max_line_bytes) {}

  void feed(std::string_view chunk, const LineHandler& on_line);
  void finish(const LineHandler& on_line);  // at EOF: emit a final unterminated line

 private:
  std::size_t max_line_bytes_;
  std::string partial_;
};

}  // namespace ddplaunch
