// The etcd client's pure parts: the endpoint list, base64, the gateway's JSON both ways, and
// how a refusal reads. No etcd needed (tests/integration/etcd_*_test.cpp run a real one).
#include <gtest/gtest.h>

#include <string_view>

#include "etcd/client.h"
#include "etcd/wire.h"

namespace ddplaunch::etcd {
namespace {

TEST(EtcdEndpoints, ParsesAListAndNamesTheBadEntry) {
  auto eps = parse_endpoints("10.0.0.5:2379, node2:2379,http://node3:2380/,[fd00::1]:2379", "--rdzv-endpoint");
  ASSERT_TRUE(eps) << eps.error;
  ASSERT_EQ(eps->size(), 4u);
  EXPECT_EQ((*eps)[0].text(), "10.0.0.5:2379");
  EXPECT_EQ((*eps)[1].host, "node2");
  EXPECT_EQ((*eps)[2].port, 2380);
  EXPECT_EQ((*eps)[3].host, "fd00::1");
  EXPECT_EQ((*eps)[3].text(), "[fd00::1]:2379");

  const std::pair<const char*, const char*> bad[] = {
      {"", "is empty"},
      {"node1", "no port; etcd's client port is usually 2379: node1:2379"},
      {"node1:0", "not a number from 1 to 65535"},
      {"node1:70000", "not a number from 1 to 65535"},
      {"node1:23x", "not a number"},
      {"node1:2379,,node2:2379", "empty entry"},
      {"node1:2379/v3", "not a URL with a path"},
      {"fd00::1:2379", "IPv6 address needs brackets"},
      {":2379", "no host"},
      {"a:1,a:1", "names a:1 twice"},
  };
  for (const auto& [text, why] : bad) {
    auto r = parse_endpoints(text, "--rdzv-endpoint");
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error.find(why), std::string::npos) << text << " -> " << r.error;
    EXPECT_NE(r.error.find("--rdzv-endpoint"), std::string::npos) << r.error;
  }
}

TEST(EtcdEndpoints, HttpsEntriesOrProtocolHttpsMeanTls) {
  // protocol: what --rdzv-conf protocol= said.
  auto tls_of = [](const char* list, std::string_view protocol) {
    return uses_tls(*parse_endpoints(list, "--rdzv-endpoint"), protocol == "https", "--rdzv-endpoint");
  };
  auto eps = parse_endpoints("https://node1:2379/,https://[fd00::1]:2379", "--rdzv-endpoint");
  ASSERT_TRUE(eps) << eps.error;
  EXPECT_EQ((*eps)[0].text(), "node1:2379");
  EXPECT_EQ((*eps)[0].scheme, Scheme::Https);
  EXPECT_EQ((*eps)[1].host, "fd00::1");
  EXPECT_TRUE(*tls_of("https://node1:2379,https://node2:2379", "http"));
  EXPECT_TRUE(*tls_of("node1:2379", "https"));
  EXPECT_FALSE(*tls_of("node1:2379,http://node2:2379", "http"));
  auto mixed = tls_of("https://node1:2379,http://node2:2379", "http");
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error.find("mixes http:// and https://"), std::string::npos) << mixed.error;
  auto contradicts = tls_of("http://node1:2379", "https");
  ASSERT_FALSE(contradicts);
  EXPECT_NE(contradicts.error.find("protocol=https"), std::string::npos) << contradicts.error;
  EXPECT_FALSE(parse_endpoints("https://a:1,a:1", "--rdzv-endpoint"));  // the same member twice
}

TEST(EtcdWire, AuthenticateAndTheRefusedToken) {
  EXPECT_EQ(wire::authenticate_request("root", "pw").dump(), R"({"name":"root","password":"pw"})");
  auto token = wire::parse_auth_token(wire::Json::parse(R"({"header":{"revision":"3"},"token":"abc.12"})"));
  ASSERT_TRUE(token) << token.error;
  EXPECT_EQ(*token, "abc.12");
  EXPECT_FALSE(wire::parse_auth_token(wire::Json::parse(R"({"error":"etcdserver: authentication failed","code":3})")));
  EXPECT_TRUE(wire::token_refused(wire::Json::parse(R"({"error":"etcdserver: invalid auth token","code":16})")));
  EXPECT_TRUE(wire::token_refused(wire::Json::parse(R"({"error":{"grpc_code":16,"message":"x"},"code":16})")));
  EXPECT_TRUE(wire::token_refused(wire::Json::parse(R"({"error":"etcdserver: invalid auth token"})")));
  EXPECT_FALSE(wire::token_refused(wire::Json::parse(R"({"error":"etcdserver: user name is empty","code":3})")));
  EXPECT_FALSE(wire::token_refused(wire::Json::parse(R"({"header":{}})")));
}

TEST(EtcdWire, RefusalsAreClassifiedFromEtcdsTextAndCode) {
  using wire::Refusal;
  const auto kind = [](const char* body) { return wire::classify_refusal(wire::Json::parse(body)); };
  EXPECT_EQ(kind(R"({"error":"etcdserver: requested lease not found","code":5})"), Refusal::LeaseNotFound);
  EXPECT_EQ(kind(R"({"error":"etcdserver: user name is empty","code":3})"), Refusal::AuthNeeded);
  EXPECT_EQ(kind(R"({"error":"etcdserver: permission denied","code":7})"), Refusal::PermissionDenied);
  EXPECT_EQ(kind(R"({"error":{"grpc_code":16,"message":"x"},"code":16})"), Refusal::TokenRefused);
  EXPECT_EQ(kind(R"({"error":"etcdserver: authentication is not enabled","code":9})"), Refusal::AuthNotEnabled);
  EXPECT_EQ(kind(R"({"error":"etcdserver: authentication failed, invalid user ID or password","code":3})"),
            Refusal::BadCredentials);
  EXPECT_EQ(kind(R"({"error":"etcdserver: too many operations in txn request","code":3})"), Refusal::TooManyTxnOps);
  EXPECT_EQ(kind(R"({"error":"etcdserver: request is too large","code":3})"), Refusal::RequestTooLarge);
  EXPECT_EQ(kind(R"({"error":"etcdserver: mvcc: required revision has been compacted","code":11})"),
            Refusal::RevisionCompacted);
  EXPECT_EQ(kind(R"({"error":"etcdserver: something new","code":2})"), Refusal::Other);
  EXPECT_EQ(kind(R"({"header":{}})"), Refusal::Other);
  // A watch's cancel reason is text alone.
  EXPECT_EQ(wire::classify_refusal(std::string("etcdserver: invalid auth token")), Refusal::TokenRefused);
}

TEST(EtcdWire, Base64BothWaysAndPrefixEnd) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\x00\xff\x10", 3)})
    EXPECT_EQ(*wire::base64_decode(wire::base64_encode(s)), s);
  EXPECT_EQ(wire::base64_encode("a/x"), "YS94");
  EXPECT_FALSE(wire::base64_decode("a!b="));
  EXPECT_EQ(wire::prefix_end("a/"), "a0");
  EXPECT_EQ(wire::prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(wire::prefix_end(""), std::string(1, '\0'));
}

TEST(EtcdWire, FencingTxnJson) {
  const LeaderKey k{"job/e", "job/e/694d", 17, 0x694d};
  const auto j = wire::txn_request({{Compare::still_leader(k)}, {TxnOp::put("s", "v", 5), TxnOp::erase_prefix("p/")}, {}});
  ASSERT_EQ(j["compare"].size(), 1u);
  EXPECT_EQ(j["compare"][0]["target"], "CREATE");
  EXPECT_EQ(j["compare"][0]["result"], "EQUAL");
  EXPECT_EQ(j["compare"][0]["create_revision"], "17");
  EXPECT_EQ(*wire::base64_decode(j["compare"][0]["key"].get<std::string>()), "job/e/694d");
  EXPECT_EQ(j["success"][0]["request_put"]["lease"], "5");
  EXPECT_EQ(*wire::base64_decode(j["success"][1]["request_delete_range"]["range_end"].get<std::string>()), "p0");
  EXPECT_TRUE(j["failure"].empty());
}

TEST(EtcdWire, ReadsTheGatewaysAnswers) {
  auto range = wire::parse_range(wire::Json::parse(
      R"({"header":{"revision":"9"},"kvs":[{"key":"YS94","create_revision":"2","mod_revision":"3","version":"2","value":"djE=","lease":"7"}],"count":"1"})"));
  ASSERT_TRUE(range) << range.error;
  EXPECT_EQ(range->revision, 9);
  EXPECT_EQ(range->kvs.at(0).key, "a/x");
  EXPECT_EQ(range->kvs.at(0).value, "v1");
  EXPECT_EQ(range->kvs.at(0).lease, 7);
  EXPECT_TRUE(wire::parse_range(wire::Json::parse(R"({"header":{"revision":"2"}})"))->kvs.empty());
  EXPECT_FALSE(wire::parse_range(wire::Json::parse(R"({"header":{"revision":"x"}})")));
  EXPECT_FALSE(wire::parse_txn(wire::Json::parse(R"({"header":{"revision":"4"}})"))->succeeded);
  EXPECT_EQ(*wire::parse_keepalive_ttl(wire::Json::parse(R"({"ID":"123"})")), 0);  // a lease gone
  auto won = wire::parse_campaign(wire::Json::parse(R"({"leader":{"name":"ZWw=","key":"ZWwvMQ==","rev":"3","lease":"42"}})"));
  ASSERT_TRUE(won) << won.error;
  EXPECT_EQ(won->key, "el/1");
  EXPECT_EQ(won->rev, 3);
  auto watch = wire::parse_watch_message(wire::Json::parse(
      R"({"header":{"revision":"6"},"events":[{"kv":{"key":"YS96","mod_revision":"5","value":"djk="}},{"type":"DELETE","kv":{"key":"YS96","mod_revision":"6"}}]})"));
  ASSERT_TRUE(watch) << watch.error;
  ASSERT_EQ(watch->events.size(), 2u);
  EXPECT_EQ(watch->events[1].type, WatchEvent::Type::Delete);
  EXPECT_EQ(watch->events[1].kv.mod_revision, 6);
}

TEST(EtcdWire, RefusalNamesEndpointAndLikelyCause) {
  const auto body = wire::Json::parse(R"({"error":"etcdserver: requested lease not found","code":5})");
  const auto text = describe_refusal("127.0.0.1:2379", "--rdzv-endpoint", "put 'k'", 404, body);
  EXPECT_EQ(text, "etcd at 127.0.0.1:2379 (--rdzv-endpoint) refused put 'k': etcdserver: requested lease not found "
                  "(the lease expired or was revoked: its keepalive stopped for longer than its TTL)");
  EXPECT_NE(describe_refusal("h:1", "--rdzv-endpoint", "get 'k'", 404, wire::Json()).find("etcd 3.4 or newer"),
            std::string::npos);
  const auto no_user = wire::Json::parse(R"({"error":"etcdserver: user name is empty","code":3})");
  EXPECT_NE(describe_refusal("h:1", "--rdzv-endpoint", "put 'k'", 400, no_user).find("username=NAME"),
            std::string::npos);
}

TEST(EtcdClient, CreateRefusesAPasswordWithoutUserAndUnreadableTlsFiles) {
  boost::asio::io_context io;
  ClientOptions o;
  o.endpoints = *parse_endpoints("h:2379", "--rdzv-endpoint");
  o.credentials.password = "pw";
  auto c = Client::create(io, o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error.find("without a user"), std::string::npos) << c.error;
  o.credentials = {};
  o.tls = true;
  o.tls_files.cacert = "/nonexistent/ca.pem";
  c = Client::create(io, o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error.find("--rdzv-conf cacert=/nonexistent/ca.pem: cannot read it"), std::string::npos) << c.error;
  o.tls_files = {"", "/etc/hostname", ""};
  c = Client::create(io, o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error.find("cert=/etc/hostname is given without key="), std::string::npos) << c.error;
  o.tls_files = {"/etc/hostname", "", ""};
  c = Client::create(io, o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error.find("cacert=/etc/hostname: not a PEM CA certificate"), std::string::npos) << c.error;
  // Plain http builds no TLS context, whatever files were named.
  o.tls = false;
  EXPECT_TRUE(Client::create(io, o));
}

}  // namespace
}  // namespace ddplaunch::etcd
