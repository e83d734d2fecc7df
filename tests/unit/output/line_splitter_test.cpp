// LineSplitter: worker output reassembled into lines across chunks, overlong lines cut at
// the bound, a partial line kept until the stream ends.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "output/line_splitter.h"

using namespace ddplaunch;

namespace {
std::vector<std::string> split_all(LineSplitter& s, const std::vector<std::string>& chunks, bool finish = true) {
  std::vector<std::string> lines;
  auto add = [&](std::string_view l) { lines.emplace_back(l); };
  for (const auto& c : chunks) s.feed(c, add);
  if (finish) s.finish(add);
  return lines;
}
}  // namespace

TEST(LineSplitter, ReassemblesLinesAcrossChunks) {
  LineSplitter s;
  EXPECT_EQ(split_all(s, {"hel", "lo\nwor", "ld\n\nlast"}),
            (std::vector<std::string>{"hello", "world", "", "last"}));
}

TEST(LineSplitter, CutsOverlongLinesAtTheBound) {
  LineSplitter s(4);
  EXPECT_EQ(split_all(s, {"abcdefghij\nxy\n"}), (std::vector<std::string>{"abcd", "efgh", "ij", "xy"}));
}

TEST(LineSplitter, KeepsPartialLineUntilFinish) {
  LineSplitter s;
  EXPECT_TRUE(split_all(s, {"no newline yet"}, false).empty());
}
