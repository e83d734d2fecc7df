// RankTailBuffer: numbered lines, a new reader starts with the last few, a slow one is told
// what it missed, answers are bounded in bytes.
#include "output/rank_tail_buffer.h"

#include <gtest/gtest.h>

#include <string>

namespace ddplaunch {
namespace {

TEST(RankTailBuffer, ANewReaderGetsTheLastLinesThenOnlyNewOnes) {
  RankTailBuffer buffer;
  for (int i = 0; i < 15; ++i) buffer.append("line " + std::to_string(i) + "\n");
  auto first = buffer.read(-1, 1 << 20);
  EXPECT_EQ(first.missed, 0);
  EXPECT_EQ(first.lines.substr(0, 7), "line 5\n");  // the last 10
  EXPECT_EQ(first.next, 15);
  buffer.append("line 15\nline 16");
  auto second = buffer.read(first.next, 1 << 20);
  EXPECT_EQ(second.lines, "line 15\nline 16\n");
  EXPECT_EQ(second.next, 17);
  EXPECT_TRUE(buffer.read(second.next, 1 << 20).lines.empty());
}

TEST(RankTailBuffer, ASlowReaderIsToldHowManyLinesWentByAndAnswersAreBounded) {
  RankTailBuffer buffer;
  for (std::size_t i = 0; i < RankTailBuffer::kMaxLines + 5; ++i) buffer.append("x\n");
  auto late = buffer.read(0, 1 << 20);
  EXPECT_EQ(late.missed, 5);
  auto small = buffer.read(10, 8);  // 4 lines of 2 bytes
  EXPECT_EQ(small.lines, "x\nx\nx\nx\n");
  EXPECT_EQ(small.next, 14);
  auto one_long = RankTailBuffer{};
  one_long.append(std::string(100, 'y') + "\n");
  EXPECT_EQ(one_long.read(0, 8).lines.size(), 101u);  // at least one line, however long
}

}  // namespace
}  // namespace ddplaunch
