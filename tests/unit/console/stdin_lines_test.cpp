// A script's lines for `ddplaunch debug`: read from a pipe in blocks, each cut at the console's
// bound with the cut counted, in order; a full queue holds the reader back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "console/stdin_lines.h"
#include "console/typed_line.h"

using ddplaunch::StdinLine;
using ddplaunch::StdinLines;

namespace {
// Takes lines until `count` came or 10 s passed.
std::vector<StdinLine> take_lines(StdinLines& lines, std::size_t count) {
  std::vector<StdinLine> out;
  for (int round = 0; round < 1000 && out.size() < count; ++round) {
    for (StdinLine& line : lines.take()) out.push_back(std::move(line));
    if (out.size() < count) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return out;
}

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<std::size_t>(n);
  }
}
}  // namespace

TEST(StdinLines, ALongLineIsCutAndCountedAndTheNextComesWhole) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  auto lines = StdinLines::start(pipe_fds[0]);
  std::thread writer([&] {
    write_all(pipe_fds[1], std::string(300000, 'x') + "\np secret\nlast without newline");
    ::close(pipe_fds[1]);
  });
  const std::vector<StdinLine> got = take_lines(*lines, 2);
  writer.join();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, std::string(ddplaunch::kMaxConsoleLineBytes, 'x'));
  EXPECT_EQ(got[0].cut_bytes, 300000 - ddplaunch::kMaxConsoleLineBytes);
  EXPECT_EQ(got[1].text, "p secret");
  EXPECT_EQ(got[1].cut_bytes, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(lines->take().empty());  // an unterminated last line is not a command
  lines->stop();
  ::close(pipe_fds[0]);
}

TEST(StdinLines, AFullQueueHoldsTheReaderBack) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  auto lines = StdinLines::start(pipe_fds[0]);
  std::string many;
  for (std::size_t i = 0; i < StdinLines::kMaxQueuedLines * 3; ++i) many += "p " + std::to_string(i) + "\n";
  std::thread writer([&] {
    write_all(pipe_fds[1], many);
    ::close(pipe_fds[1]);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::size_t first = lines->take().size();
  EXPECT_LE(first, StdinLines::kMaxQueuedLines);  // the reader waited for room
  const std::vector<StdinLine> rest = take_lines(*lines, StdinLines::kMaxQueuedLines * 3 - first);
  writer.join();
  ASSERT_EQ(first + rest.size(), StdinLines::kMaxQueuedLines * 3);  // none lost, in order
  EXPECT_EQ(rest.back().text, "p " + std::to_string(StdinLines::kMaxQueuedLines * 3 - 1));
  lines->stop();
  ::close(pipe_fds[0]);
}
