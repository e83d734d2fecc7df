// Generation: the group's restart round as one type — ordered, the next one after a restart,
// printed and parsed as the plain decimal the wire and the logs always carried.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/generation_format.h"

using ddplaunch::rendezvous::Generation;
using ddplaunch::rendezvous::parse_generation;

namespace {

TEST(Generation, StartsAtZeroAndCountsRestarts) {
  EXPECT_EQ(Generation{}, Generation{0});
  EXPECT_EQ(Generation{0}.next(), Generation{1});
  EXPECT_LT(Generation{1}, Generation{2});
  EXPECT_GT(Generation{3}.next(), Generation{3});
}

TEST(Generation, PrintsAsItsNumber) {
  EXPECT_EQ(to_string(Generation{0}), "0");
  EXPECT_EQ(to_string(Generation{18446744073709551615ull}), "18446744073709551615");
  EXPECT_EQ(fmt::format("generation {}", Generation{7}), "generation 7");
  EXPECT_EQ(fmt::format("[{:>3}]", Generation{7}), "[  7]");
}

TEST(Generation, ParsesTheWholeDecimalTextOnly) {
  EXPECT_EQ(parse_generation("0"), Generation{0});
  EXPECT_EQ(parse_generation("42"), Generation{42});
  EXPECT_EQ(parse_generation("18446744073709551615"), Generation{18446744073709551615ull});
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1x", "NaN", "18446744073709551616"})
    EXPECT_FALSE(parse_generation(bad)) << "'" << bad << "'";
}

}  // namespace
