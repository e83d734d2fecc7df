// preflight: NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME parsing and checks on a fake interface table.
#include <gtest/gtest.h>

#include "ddplaunch/preflight/socket_ifname.h"

using namespace ddplaunch::preflight;

namespace {
NetInterface itf(std::string name, bool up, bool loopback, std::vector<std::string> v4) {
  NetInterface i;
  i.name = std::move(name);
  i.up = up;
  i.loopback = loopback;
  i.ipv4 = std::move(v4);
  return i;
}

// lo, eth0 (up), eth01 (up), ens5 (up, route to master), docker0 (up), eth9 (down), ib0 (no address)
std::vector<NetInterface> table() {
  return {itf("lo", true, true, {"127.0.0.1"}), itf("eth0", true, false, {"10.1.0.2"}),
          itf("eth01", true, false, {"10.2.0.2"}), itf("ens5", true, false, {"10.0.0.2"}),
          itf("docker0", true, false, {"172.17.0.1"}), itf("eth9", false, false, {"10.9.0.2"}),
          itf("ib0", true, false, {})};
}

std::vector<std::string> select(std::string_view spec, IfnameDialect d = IfnameDialect::Nccl) {
  return selected_interfaces(parse_ifname_spec(spec, d), table());
}
using V = std::vector<std::string>;
}  // namespace

TEST(PreflightSocketIfname, NcclParseTable) {
  auto p = parse_ifname_spec("eth,ib", IfnameDialect::Nccl);
  EXPECT_FALSE(p.exclude);
  EXPECT_FALSE(p.exact);
  EXPECT_EQ(p.names, (V{"eth", "ib"}));
  p = parse_ifname_spec("^docker,lo", IfnameDialect::Nccl);
  EXPECT_TRUE(p.exclude);
  EXPECT_EQ(p.names, (V{"docker", "lo"}));
  p = parse_ifname_spec("=eth0", IfnameDialect::Nccl);
  EXPECT_TRUE(p.exact);
  EXPECT_FALSE(p.exclude);
  p = parse_ifname_spec("^=eth0,eth1", IfnameDialect::Nccl);
  EXPECT_TRUE(p.exact);
  EXPECT_TRUE(p.exclude);
  EXPECT_EQ(p.names, (V{"eth0", "eth1"}));
  p = parse_ifname_spec(",,eth0,,ens:1234,", IfnameDialect::Nccl);  // empties skipped, port cut
  EXPECT_EQ(p.names, (V{"eth0", "ens"}));
  EXPECT_TRUE(parse_ifname_spec("e", IfnameDialect::Nccl).ignored);
  EXPECT_TRUE(parse_ifname_spec("", IfnameDialect::Nccl).ignored);
}

TEST(PreflightSocketIfname, NcclSelectionTable) {
  EXPECT_EQ(select("eth"), (V{"eth0", "eth01", "eth9"}));  // prefix; down ones still match
  EXPECT_EQ(select("=eth0"), (V{"eth0"}));                   // exact
  EXPECT_EQ(select("eth0"), (V{"eth0", "eth01"}));           // prefix, so eth01 too
  EXPECT_EQ(select("^docker,lo,eth"), (V{"ens5"}));          // exclude prefixes; ib0 has no address
  EXPECT_EQ(select("^=eth0,lo,docker0,eth9"), (V{"eth01", "ens5"}));
  EXPECT_EQ(select("ib"), V{});                               // ib0 has no address
  EXPECT_EQ(select("^="), V{});                               // NCCL: empty list matches all, ^ flips
  EXPECT_EQ(select("x"), V{});                                // ignored (too short)
}

TEST(PreflightSocketIfname, GlooIsExactCommaListWithoutNcclSyntax) {
  auto p = parse_ifname_spec("eth0,ens5", IfnameDialect::Gloo);
  EXPECT_TRUE(p.exact);
  EXPECT_EQ(p.names, (V{"eth0", "ens5"}));
  EXPECT_EQ(select("eth0,ens5", IfnameDialect::Gloo), (V{"eth0", "ens5"}));
  EXPECT_EQ(select("eth", IfnameDialect::Gloo), V{});  // no prefix matching in gloo
  EXPECT_EQ(parse_ifname_spec("eth0,,ens5", IfnameDialect::Gloo).names, (V{"eth0", "", "ens5"}));
  EXPECT_EQ(dialect_for_variable("GLOO_SOCKET_IFNAME"), IfnameDialect::Gloo);
  EXPECT_EQ(dialect_for_variable("NCCL_SOCKET_IFNAME"), IfnameDialect::Nccl);

  auto prefix = check_socket_ifname("GLOO_SOCKET_IFNAME", "ens", table(), "");
  EXPECT_FALSE(prefix.ok);
  EXPECT_NE(prefix.message.find("no interface named 'ens'"), std::string::npos) << prefix.message;
  auto caret = check_socket_ifname("GLOO_SOCKET_IFNAME", "^docker0", table(), "");
  EXPECT_FALSE(caret.ok);
  EXPECT_NE(caret.message.find("exact interface names only"), std::string::npos) << caret.message;
  auto empty = check_socket_ifname("GLOO_SOCKET_IFNAME", "ens5,", table(), "");
  EXPECT_TRUE(empty.ok) << empty.message;  // like std::getline, a trailing comma adds no piece
  auto middle = check_socket_ifname("GLOO_SOCKET_IFNAME", "ens5,,eth0", table(), "");
  EXPECT_FALSE(middle.ok);
  EXPECT_NE(middle.message.find("empty entry"), std::string::npos) << middle.message;
  EXPECT_TRUE(check_socket_ifname("GLOO_SOCKET_IFNAME", "ens5", table(), "ens5").ok);
}

TEST(PreflightSocketIfname, RouteInterfaceMustBeSelected) {
  auto r = check_socket_ifname("NCCL_SOCKET_IFNAME", "eth0", table(), "ens5", "10.0.0.1");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.message.find("NCCL_SOCKET_IFNAME=eth0 but the route to the master 10.0.0.1 leaves through "
                           "ens5; set NCCL_SOCKET_IFNAME=ens5 or unset it"),
            std::string::npos)
      << r.message;
  auto ok = check_socket_ifname("NCCL_SOCKET_IFNAME", "ens", table(), "ens5", "10.0.0.1");
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_NE(ok.message.find("selects ens5"), std::string::npos);
}

TEST(PreflightSocketIfname, MissingDownAndAddresslessInterfaces) {
  std::vector<NetInterface> t = table();
  auto missing = check_socket_ifname("NCCL_SOCKET_IFNAME", "=eth7", t, "");
  ASSERT_FALSE(missing.ok);
  EXPECT_NE(missing.message.find("no interface named 'eth7'"), std::string::npos) << missing.message;
  EXPECT_NE(missing.message.find("interfaces here: lo, eth0"), std::string::npos) << missing.message;
  auto no_prefix = check_socket_ifname("NCCL_SOCKET_IFNAME", "enp", t, "");
  EXPECT_NE(no_prefix.message.find("no interface starting with 'enp'"), std::string::npos) << no_prefix.message;
  auto down = check_socket_ifname("NCCL_SOCKET_IFNAME", "=eth9", t, "");
  ASSERT_FALSE(down.ok);
  EXPECT_NE(down.message.find("eth9 is down"), std::string::npos) << down.message;
  auto down_prefix = check_socket_ifname("NCCL_SOCKET_IFNAME", "eth", t, "");  // eth9 matches too
  EXPECT_FALSE(down_prefix.ok);
  auto noaddr = check_socket_ifname("NCCL_SOCKET_IFNAME", "ib", t, "");
  ASSERT_FALSE(noaddr.ok);
  EXPECT_NE(noaddr.message.find("ib0 has no IPv4/IPv6 address"), std::string::npos) << noaddr.message;
  // Both problems reported at once.
  auto two = check_socket_ifname("NCCL_SOCKET_IFNAME", "=eth7,eth9", t, "");
  EXPECT_NE(two.message.find("eth7"), std::string::npos);
  EXPECT_NE(two.message.find("eth9 is down"), std::string::npos);
}

TEST(PreflightSocketIfname, ExclusionThatKeepsLoopbackFailsOnMultiNode) {
  auto r = check_socket_ifname("NCCL_SOCKET_IFNAME", "^docker,eth", table(), "ens5", "10.0.0.1");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.message.find("loopback interface lo"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("add lo to the exclusion list"), std::string::npos) << r.message;
  EXPECT_TRUE(check_socket_ifname("NCCL_SOCKET_IFNAME", "^docker,eth,lo", table(), "ens5").ok);
  // Single node on loopback: selecting lo is right.
  EXPECT_TRUE(check_socket_ifname("NCCL_SOCKET_IFNAME", "lo", table(), "lo").ok);
  auto all = check_socket_ifname("NCCL_SOCKET_IFNAME", "^=", table(), "");
  EXPECT_FALSE(all.ok);
  EXPECT_NE(all.message.find("selects no interface"), std::string::npos) << all.message;
}

TEST(PreflightSocketIfname, TooShortValueIsIgnoredWithANote) {
  auto r = check_socket_ifname("NCCL_SOCKET_IFNAME", "e", table(), "ens5");
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.message.find("ignored"), std::string::npos);
}
