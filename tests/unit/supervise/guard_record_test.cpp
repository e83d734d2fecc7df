// The orphan guard's pipe records: only NUL-led records are commands; a line of text (a log
// line that reached the pipe by mistake) is never one, whatever it says; values are bounded.
#include "supervise/guard_record.h"

#include <gtest/gtest.h>

#include <string>

namespace ddplaunch {
namespace {

constexpr std::size_t kMaxPath = 4096;

// As the guard reads it: one line, its newline not counted (the path points into `line`).
GuardRecord parse(const std::string& line) {
  const std::size_t length = !line.empty() && line.back() == '\n' ? line.size() - 1 : line.size();
  return parse_guard_record(line.data(), length, kMaxPath);
}

TEST(GuardRecord, WhatTheLauncherWritesTheGuardReads) {
  GuardRecord watch = parse(guard_record('+', "4242"));
  EXPECT_EQ(watch.op, GuardRecord::Op::Watch);
  EXPECT_EQ(watch.group, 4242);
  GuardRecord forget = parse(guard_record('-', "4242"));
  EXPECT_EQ(forget.op, GuardRecord::Op::Forget);
  EXPECT_EQ(forget.group, 4242);
  const std::string dir_line = guard_record('d', "/tmp/ddplaunch-x");
  GuardRecord dir = parse(dir_line);
  ASSERT_EQ(dir.op, GuardRecord::Op::Directory);
  EXPECT_EQ(std::string(dir.path, dir.path_size), "/tmp/ddplaunch-x");
  EXPECT_EQ(parse(guard_record('s', "")).op, GuardRecord::Op::Swept);
}

TEST(GuardRecord, TextWithoutTheLeadingNulIsNeverACommand) {
  for (const char* text : {"+4242\n", "-4242\n", "d/home\n", "s\n", "12:00:00 ddplaunch info: +4242\n"})
    EXPECT_EQ(parse(text).op, GuardRecord::Op::None) << text;
}

TEST(GuardRecord, MalformedOrOutOfRangeValuesAreIgnored) {
  for (const std::string value : {"1", "0", "2147483648", "99999999999999999999", "12ab", "-5", ""})
    EXPECT_EQ(parse(guard_record('+', value)).op, GuardRecord::Op::None) << value;
  EXPECT_EQ(parse(guard_record('x', "4242")).op, GuardRecord::Op::None);  // no such operation
  EXPECT_EQ(parse(guard_record('d', std::string(kMaxPath, 'p'))).op, GuardRecord::Op::None);  // too long a path
  EXPECT_EQ(parse(std::string(1, '\0')).op, GuardRecord::Op::None);
  EXPECT_EQ(parse(guard_record('+', "2")).group, 2);
  EXPECT_EQ(parse(guard_record('+', "2147483647")).group, 2147483647L);
}

}  // namespace
}  // namespace ddplaunch
