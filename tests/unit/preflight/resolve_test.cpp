// preflight: name resolution, loopback detection and the MASTER_ADDR=127.0.0.1 multi-node check.
#include <gtest/gtest.h>

#include <algorithm>

#include "ddplaunch/preflight/resolve.h"

using namespace ddplaunch::preflight;

TEST(PreflightResolve, LocalhostResolvesToLoopback) {
  auto r = resolve_host("localhost");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_FALSE(r->empty());
  for (const auto& a : *r) EXPECT_TRUE(is_loopback(a)) << a;
  EXPECT_TRUE(std::find(r->begin(), r->end(), "127.0.0.1") != r->end() ||
              std::find(r->begin(), r->end(), "::1") != r->end());
}

TEST(PreflightResolve, LiteralsResolveToThemselves) {
  auto v4 = resolve_host("198.18.0.7");
  ASSERT_TRUE(v4.ok()) << v4.error;
  EXPECT_EQ(*v4, std::vector<std::string>{"198.18.0.7"});
  auto v6 = resolve_host("0:0::1");
  ASSERT_TRUE(v6.ok()) << v6.error;
  EXPECT_EQ(*v6, std::vector<std::string>{"::1"});
}

TEST(PreflightResolve, UnresolvableNameNamesTheHost) {
  auto r = resolve_host("no-such-host.invalid");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("no-such-host.invalid"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("cannot resolve"), std::string::npos) << r.error;
}

TEST(PreflightResolve, EmptyHostIsAnError) {
  auto r = resolve_host("");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("--master"), std::string::npos);
}

TEST(PreflightResolve, IsLoopbackTable) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.0.1.1"));
  EXPECT_TRUE(is_loopback("127.255.255.254"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("[::1]"));
  EXPECT_TRUE(is_loopback("::ffff:127.0.0.1"));
  EXPECT_TRUE(is_loopback("localhost"));
  EXPECT_TRUE(is_loopback("LocalHost"));
  EXPECT_FALSE(is_loopback("128.0.0.1"));
  EXPECT_FALSE(is_loopback("10.0.0.1"));
  EXPECT_FALSE(is_loopback("::2"));
  EXPECT_FALSE(is_loopback("::ffff:10.0.0.1"));
  EXPECT_FALSE(is_loopback("localhost.example.com"));
  EXPECT_FALSE(is_loopback(""));
}

TEST(PreflightResolve, LoopbackMasterFailsOnlyForMultiNode) {
  EXPECT_TRUE(check_master_not_loopback("127.0.0.1", {"127.0.0.1"}, 1).ok);
  auto bad = check_master_not_loopback("127.0.0.1", {"127.0.0.1"}, 4);
  ASSERT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("MASTER_ADDR=127.0.0.1"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("--master <routable address of node 0>"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("4 nodes"), std::string::npos) << bad.message;
}

TEST(PreflightResolve, NameThatMapsToLoopbackMentionsEtcHosts) {
  auto bad = check_master_not_loopback("node01", {"127.0.1.1"}, 2);
  ASSERT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("node01 (resolves to 127.0.1.1)"), std::string::npos) << bad.message;
  EXPECT_NE(bad.message.find("/etc/hosts"), std::string::npos) << bad.message;
}

TEST(PreflightResolve, RoutableMasterPassesAndMixedGetsANote) {
  auto good = check_master_not_loopback("node01", {"10.0.0.5"}, 8);
  EXPECT_TRUE(good.ok);
  EXPECT_TRUE(good.message.empty());
  auto mixed = check_master_not_loopback("node01", {"10.0.0.5", "127.0.1.1"}, 8);
  EXPECT_TRUE(mixed.ok);
  EXPECT_NE(mixed.message.find("127.0.1.1"), std::string::npos);
}
