// preflight: interface listing and route lookup on this machine's loopback.
#include <gtest/gtest.h>

#include <algorithm>

#include "ddplaunch/preflight/interfaces.h"

using namespace ddplaunch::preflight;

TEST(PreflightInterfaces, LoopbackIsListedUpWithItsAddress) {
  auto list = list_interfaces();
  ASSERT_TRUE(list.ok()) << list.error;
  auto lo = std::find_if(list->begin(), list->end(), [](const NetInterface& i) { return i.name == "lo"; });
  ASSERT_NE(lo, list->end());
  EXPECT_TRUE(lo->up);
  EXPECT_TRUE(lo->loopback);
  EXPECT_NE(std::find(lo->ipv4.begin(), lo->ipv4.end(), "127.0.0.1"), lo->ipv4.end());
  // Names are unique: one entry per interface even with several addresses.
  for (const auto& i : *list) {
    EXPECT_EQ(std::count_if(list->begin(), list->end(), [&](const NetInterface& j) { return j.name == i.name; }), 1);
  }
}

TEST(PreflightInterfaces, RouteToLoopbackLeavesThroughLo) {
  auto src = route_source_address("127.0.0.1");
  ASSERT_TRUE(src.ok()) << src.error;
  EXPECT_EQ(*src, "127.0.0.1");
  auto list = list_interfaces();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(interface_for_address(*src, *list), std::optional<std::string>("lo"));
}

TEST(PreflightInterfaces, RouteRequiresANumericAddress) {
  auto r = route_source_address("localhost");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("not a numeric IP"), std::string::npos);
}

TEST(PreflightInterfaces, InterfaceForAddressComparesAddressesNotText) {
  std::vector<NetInterface> fake(2);
  fake[0].name = "lo";
  fake[0].ipv6 = {"::1"};
  fake[1].name = "ens5";
  fake[1].ipv4 = {"10.0.0.7"};
  EXPECT_EQ(interface_for_address("0:0:0::1", fake), std::optional<std::string>("lo"));
  EXPECT_EQ(interface_for_address("10.0.0.7", fake), std::optional<std::string>("ens5"));
  EXPECT_EQ(interface_for_address("10.0.0.8", fake), std::nullopt);
  EXPECT_EQ(interface_for_address("garbage", fake), std::nullopt);
}
