// The status-channel line format shared by the shim and the launcher.
#include "ddplaunch/contract.h"

#include <gtest/gtest.h>

using namespace ddplaunch::contract;

TEST(StatusFormat, RoundTripsEveryField) {
  StatusMessage m{StatusEvent::InitFailed, 3, 2, 4242, "NCCL error: unhandled cuda error\nlast: driver"};
  auto parsed = parse_status(format_status(m));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->event, StatusEvent::InitFailed);
  EXPECT_EQ(parsed->rank, 3);
  EXPECT_EQ(parsed->generation, 2u);
  EXPECT_EQ(parsed->pid, 4242);
  EXPECT_EQ(parsed->detail, "NCCL error: unhandled cuda error | last: driver");
}

TEST(StatusFormat, RejectsGarbage) {
  EXPECT_FALSE(parse_status("").has_value());
  EXPECT_FALSE(parse_status("hello world").has_value());
  EXPECT_FALSE(parse_status("DDPL1 init_ok x 0 1").has_value());
  EXPECT_FALSE(parse_status("DDPL1 explode 0 0 1").has_value());
  EXPECT_FALSE(parse_status("DDPL1 init_ok 0 0 0").has_value());  // pid 0 is not a process
  EXPECT_FALSE(parse_status("DDPL1 init_ok -1 0 5").has_value());
}

TEST(StatusFormat, TruncatesOversizedDetail) {
  StatusMessage m{StatusEvent::InitFailed, 0, 0, 1, std::string(10000, 'x')};
  EXPECT_EQ(format_status(m).size(), kMaxStatusBytes);
}
