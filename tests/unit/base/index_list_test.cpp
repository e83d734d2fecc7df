// Range lists ("0-3,8"): CPU lists and the rank sets a person types.
#include <gtest/gtest.h>

#include "ddplaunch/base/index_list.h"

using ddplaunch::format_index_list;
using ddplaunch::parse_index_list;

TEST(IndexList, ParsesRangesSortedWithoutRepeats) {
  EXPECT_EQ(parse_index_list("0,4-7", 100), (std::vector<int>{0, 4, 5, 6, 7}));
  EXPECT_EQ(parse_index_list("5,1-2,2\n", 100), (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(parse_index_list("", 100), std::vector<int>{});
  EXPECT_FALSE(parse_index_list("3-1", 100));
  EXPECT_FALSE(parse_index_list("a", 100));
  EXPECT_FALSE(parse_index_list("0-101", 100));  // above the bound: refused, not expanded
  EXPECT_FALSE(parse_index_list("-1", 100));
  EXPECT_EQ(format_index_list({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
  EXPECT_EQ(format_index_list({}), "");
}
