// The peer probe: the plan (who probes whom), the verdict (which interface, refusals that
// name the pair, slow-link warnings) as pure functions, and the real listener + prober on
// loopback sockets (source check, a refused port, a silent peer, throughput).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/time.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "ddplaunch/preflight/peer_probe.h"
#include "ddplaunch/preflight/ring_plan.h"

namespace {

using namespace ddplaunch::preflight;
using namespace std::chrono_literals;

TEST(ProbePairs, RingForLargeJobsEveryPairForSmallOnes) {
  EXPECT_TRUE(probe_pairs(1, 8).empty());
  EXPECT_EQ(probe_pairs(2, 8), (std::vector<ProbePair>{{0, 1}}));  // 1 -> 0 is the same pair
  auto small = probe_pairs(4, 8);
  EXPECT_EQ(small.size(), 6u);  // 4 choose 2
  auto ring = probe_pairs(64, 8);
  EXPECT_EQ(ring.size(), 64u);  // scales with the ring, not the square
  EXPECT_NE(std::find(ring.begin(), ring.end(), ProbePair{63, 0}), ring.end());
  EXPECT_NE(std::find(ring.begin(), ring.end(), ProbePair{10, 11}), ring.end());
}

std::vector<NodeProbeOffer> two_nic_offers(int nodes) {
  std::vector<NodeProbeOffer> offers;
  for (int n = 0; n < nodes; ++n)
    offers.push_back({n, "h" + std::to_string(n),
                      {{"eth0", "10.0.0." + std::to_string(n + 1), 40000 + n, ""},
                       {"eth1", "10.0.1." + std::to_string(n + 1), 41000 + n, ""}}});
  return offers;
}

// Every planned probe "ran" with the outcome `result_of(pair, ifname)`.
template <class F>
std::vector<ProbedLink> run_plan(const std::vector<NodeProbeOffer>& offers, F result_of) {
  std::vector<ProbedLink> links;
  auto pairs = probe_pairs(static_cast<int>(offers.size()), 8);
  for (const auto& o : offers)
    for (const auto& p : probes_for_node(o.node, offers, pairs, 2s, 300ms))
      links.push_back({p.pair, p.probe.ifname, p.probe.local_address,
                       p.probe.peer.address + ":" + std::to_string(p.probe.peer.port), result_of(p.pair, p.probe.ifname)});
  return links;
}

LinkResult ok(double mbit) { return LinkResult{true, "", 0.1, mbit, ""}; }
LinkResult timed_out() { return LinkResult{false, "timed out after 2 s", -1, -1, ""}; }

TEST(ProbesForNode, EveryInterfaceOfEveryPairButThroughputOnlyTowardsTheRingSuccessor) {
  auto offers = two_nic_offers(4);
  auto pairs = probe_pairs(4, 8);
  auto node1 = probes_for_node(1, offers, pairs, 2s, 300ms);
  ASSERT_EQ(node1.size(), 4u);  // 1 -> 2 (ring) and 1 -> 3, over eth0 and eth1
  for (const auto& p : node1) {
    EXPECT_EQ(p.probe.sample, p.pair.to == 2 ? 300ms : 0ms) << p.pair.from << "->" << p.pair.to;
    EXPECT_EQ(p.probe.local_address, p.probe.ifname == "eth0" ? "10.0.0.2" : "10.0.1.2");
  }
  auto node3 = probes_for_node(3, offers, pairs, 2s, 300ms);  // 3 -> 0 closes the ring
  ASSERT_EQ(node3.size(), 2u);
  EXPECT_EQ(node3[0].pair.to, 0);
  EXPECT_EQ(node3[0].probe.sample, 300ms);
}

TEST(ChooseInterface, FirewallOnOneNicBetweenTwoNonMasterNodesPicksTheOther) {
  auto offers = two_nic_offers(4);
  auto links = run_plan(offers, [](ProbePair p, const std::string& ifname) {
    return ifname == "eth1" && p.from == 2 && p.to == 3 ? timed_out() : ok(9000);
  });
  auto choice = choose_interface(offers, links, "", "");
  EXPECT_TRUE(choice.refusal.empty()) << choice.refusal;
  EXPECT_EQ(choice.ifname, "eth0");
  ASSERT_FALSE(choice.warnings.empty());
  EXPECT_NE(choice.warnings.back().find("node 2 (host h2, 10.0.1.3) cannot reach node 3 (host h3, 10.0.1.4:41003) over "
                                        "eth1: timed out after 2 s"),
            std::string::npos)
      << choice.warnings.back();
}

TEST(ChooseInterface, BlockedOnBothNicsIsRefusedNamingThePairOnEach) {
  auto offers = two_nic_offers(3);
  auto links = run_plan(offers, [](ProbePair p, const std::string&) {
    return p.from == 1 && p.to == 2 ? timed_out() : ok(9000);
  });
  auto choice = choose_interface(offers, links, "", "");
  EXPECT_TRUE(choice.ifname.empty());
  EXPECT_NE(choice.refusal.find("node 1 (host h1, 10.0.0.2) cannot reach node 2 (host h2, 10.0.0.3:40002) over eth0: "
                                "timed out after 2 s"),
            std::string::npos)
      << choice.refusal;
  EXPECT_NE(choice.refusal.find("over eth1: timed out"), std::string::npos) << choice.refusal;
  EXPECT_NE(choice.refusal.find("--no-peer-probe"), std::string::npos) << choice.refusal;
}

TEST(ChooseInterface, UsersInterfaceThatDoesNotConnectIsRefusedNamingThePairAndWhatWorks) {
  auto offers = two_nic_offers(4);
  auto links = run_plan(offers, [](ProbePair p, const std::string& ifname) {
    return ifname == "eth1" && p.from == 2 && p.to == 3 ? timed_out() : ok(9000);
  });
  auto choice = choose_interface(offers, links, "NCCL_SOCKET_IFNAME", "eth1");
  EXPECT_EQ(choice.refusal,
            "node 2 (host h2, 10.0.1.3) cannot reach node 3 (host h3, 10.0.1.4:41003) over eth1: timed out after 2 s "
            "(NCCL_SOCKET_IFNAME=eth1); eth0 works: set NCCL_SOCKET_IFNAME=eth0 or unset it");
  // The user's working choice is kept, and said to be verified.
  auto fine = choose_interface(offers, run_plan(offers, [](ProbePair, const std::string&) { return ok(9000); }),
                               "NCCL_SOCKET_IFNAME", "eth1");
  EXPECT_TRUE(fine.refusal.empty());
  EXPECT_EQ(fine.ifname, "eth1");
  EXPECT_TRUE(fine.from_user);
  EXPECT_NE(fine.summary.find("(NCCL_SOCKET_IFNAME, verified)"), std::string::npos) << fine.summary;
}

TEST(ChooseInterface, PrefersTheInterfaceWhoseSlowestLinkIsFastestAndWarnsOfASlowLink) {
  auto offers = two_nic_offers(4);
  auto links = run_plan(offers, [](ProbePair p, const std::string& ifname) {
    if (ifname == "eth0") return ok(1000);                 // a 1 Gbit/s management NIC
    return p.from == 1 && p.to == 2 ? ok(80) : ok(25000);  // fast fabric, one bad link
  });
  auto choice = choose_interface(offers, links, "", "");
  EXPECT_EQ(choice.ifname, "eth0");  // eth1's slowest link (80 Mbit/s) is below eth0's
  auto no_bad_link = run_plan(offers, [](ProbePair, const std::string& ifname) { return ok(ifname == "eth0" ? 1000 : 25000); });
  EXPECT_EQ(choose_interface(offers, no_bad_link, "", "").ifname, "eth1");

  // The master's interface is kept among near-equals, not when it is far slower.
  auto near_equal = run_plan(offers, [](ProbePair, const std::string& ifname) { return ok(ifname == "eth0" ? 900 : 1000); });
  EXPECT_EQ(choose_interface(offers, near_equal, "", "", 4.0, "eth0").ifname, "eth0");
  EXPECT_EQ(choose_interface(offers, near_equal, "", "").ifname, "eth1");
  EXPECT_EQ(choose_interface(offers, no_bad_link, "", "", 4.0, "eth0").ifname, "eth1");  // 1 vs 25 Gbit/s

  auto verified = choose_interface(offers, links, "NCCL_SOCKET_IFNAME", "eth1");
  ASSERT_EQ(verified.warnings.size(), 1u);
  EXPECT_NE(verified.warnings[0].find("slow link: node 1 (host h1, 10.0.1.2) -> node 2 (host h2, 10.0.1.3:41002) over "
                                      "eth1: 80 Mbit/s, while the median of the ring's links is 25.0 Gbit/s"),
            std::string::npos)
      << verified.warnings[0];
}

TEST(RingTable, OneRowPerProbedLinkWithRttThroughputAndVerdict) {
  auto offers = two_nic_offers(2);
  auto links = run_plan(offers, [](ProbePair, const std::string& ifname) { return ifname == "eth0" ? ok(940) : timed_out(); });
  std::string table = render_ring_table(links);
  EXPECT_NE(table.find("0 -> 1    eth0       0.10 ms    940 Mbit/s      ok"), std::string::npos) << table;
  EXPECT_NE(table.find("0 -> 1    eth1       -          -               FAIL: timed out after 2 s"), std::string::npos)
      << table;
}

// The real thing on loopback: a listener, a probe that passes (source address checked,
// throughput measured), a closed port, and a listener that never answers.
TEST(PeerProbe, RealProbeOnLoopbackChecksTheSourceAndMeasuresThroughput) {
  auto started = PeerProbeListener::start({{"lo", "127.0.0.1", 0, ""}}, 30s);
  ASSERT_TRUE(started.value) << started.error;
  auto& listener = *started.value;
  ASSERT_EQ(listener->endpoints().size(), 1u);
  ASSERT_GT(listener->endpoints()[0].port, 0);

  LinkResult r = probe_link({"lo", "127.0.0.1", listener->endpoints()[0], 2s, 100ms, {}});
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.seen_as, "127.0.0.1");
  EXPECT_GE(r.rtt_ms, 0);
  EXPECT_GT(r.mbit_per_s, 0);
}

// Three nodes on loopback addresses (127.0.0.1..3, one "interface" each side), every pair
// probed concurrently; the choice is lo and the ring has throughput figures.
TEST(PeerProbe, ThreeLoopbackNodesProbeEachOtherConcurrentlyAndAgreeOnTheInterface) {
  std::vector<std::unique_ptr<PeerProbeListener>> listeners;
  std::vector<NodeProbeOffer> offers;
  for (int n = 0; n < 3; ++n) {
    auto l = PeerProbeListener::start({{"lo", "127.0.0." + std::to_string(n + 1), 0, ""}}, 30s);
    ASSERT_TRUE(l.value) << l.error;
    offers.push_back({n, "h" + std::to_string(n), (*l.value)->endpoints()});
    listeners.push_back(std::move(*l.value));
  }
  auto pairs = probe_pairs(3, 8);
  std::vector<ProbedLink> links;
  for (int n = 0; n < 3; ++n)
    for (auto& l : run_probes(probes_for_node(n, offers, pairs, 2s, 100ms))) links.push_back(l);
  ASSERT_EQ(links.size(), 3u);
  for (const auto& l : links) EXPECT_TRUE(l.result.ok) << l.result.error;
  auto choice = choose_interface(offers, links, "", "");
  EXPECT_TRUE(choice.refusal.empty()) << choice.refusal;
  EXPECT_EQ(choice.ifname, "lo");
  std::string table = render_ring_table(links);
  EXPECT_NE(table.find("0 -> 1"), std::string::npos) << table;
  // A throughput is measured and shown (its size depends on the machine's load: no bound).
  EXPECT_NE(table.find("bit/s"), std::string::npos) << table;
}

// docker0's 172.17.0.1 is on every host: not a network between nodes, so it is neither
// probed nor chosen; and a probe that reaches another launcher at a peer's address fails.
TEST(ChooseInterface, AnAddressSharedByTwoNodesIsNoNetworkBetweenThem) {
  auto offers = two_nic_offers(3);
  for (auto& o : offers) o.endpoints.push_back({"docker0", "172.17.0.1", 40500, ""});  // hosts h0, h1, h2
  auto pairs = probe_pairs(3, 8);
  for (int n = 0; n < 3; ++n)
    for (const auto& p : probes_for_node(n, offers, pairs, 2s, 0ms)) EXPECT_NE(p.probe.ifname, "docker0");
  auto links = run_plan(offers, [](ProbePair, const std::string&) { return ok(9000); });
  EXPECT_NE(choose_interface(offers, links, "", "").ifname, "docker0");
  // Nodes of one host (a loopback job) do share 127.0.0.1: that is their network.
  std::vector<NodeProbeOffer> one_host;
  for (int n = 0; n < 3; ++n) one_host.push_back({n, "same", {{"lo", "127.0.0.1", 40000 + n, ""}}});
  EXPECT_EQ(probes_for_node(0, one_host, pairs, 2s, 0ms).size(), 1u);  // 0 -> 1 (2 -> 0 is node 2's)
}

TEST(PeerProbe, AProbeThatReachesAnotherLauncherThanThePeersFails) {
  auto started = PeerProbeListener::start({{"lo", "127.0.0.1", 0, ""}}, 30s);
  ASSERT_TRUE(started.value) << started.error;
  ProbeEndpoint peer = (*started.value)->endpoints()[0];
  ASSERT_EQ(peer.listener_id.size(), 16u);
  peer.listener_id = "0123456789abcdef";  // what the real peer advertised: not this listener
  LinkResult r = probe_link({"lo", "127.0.0.1", peer, 2s, 0ms, {}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("reached another launcher at 127.0.0.1"), std::string::npos) << r.error;
}

// A stand-in for the launcher's HMAC (preflight holds no cryptography): a keyed hash.
ProbeAuth keyed(const std::string& key) {
  return {[key](std::string_view m) { return std::to_string(std::hash<std::string>{}(key + "|" + std::string(m))); },
          [](std::string_view a, std::string_view b) { return a == b; }};
}

// A connected TCP socket to the endpoint from 127.0.0.1 that sends `text` (nothing when "").
int connect_and_send(const ProbeEndpoint& e, const std::string& text) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(e.port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  if (!text.empty()) {
    EXPECT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  }
  return fd;
}

// What the listener sends before it closes the connection (bounded: 5 s).
std::string read_until_closed(int fd) {
  timeval bound{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  std::string got;
  char buffer[256];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) got.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return got;
}

// With a token, the listener answers only a hello MACed with it, and the prober believes only
// an answer MACed with it: a stranger, or a node of another job, learns and proves nothing.
TEST(PeerProbe, WithATokenOnlyMacedHellosAreAnsweredAndOnlyMacedAnswersBelieved) {
  auto started = PeerProbeListener::start({{"lo", "127.0.0.1", 0, ""}}, 30s, keyed("tok"));
  ASSERT_TRUE(started.value) << started.error;
  ProbeEndpoint peer = (*started.value)->endpoints()[0];
  LinkProbe probe{"lo", "127.0.0.1", peer, 2s, 0ms, keyed("tok")};
  LinkResult r = probe_link(probe);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_until_closed(connect_and_send(peer, "DDPLPROBE1 echo\n")), "") << "answered a hello without a MAC";
  probe.auth = keyed("other-job");
  r = probe_link(probe);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no probe answer"), std::string::npos) << r.error;

  // A listener that answers anything, without a MAC (it does not know the token).
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread impostor([fd, id = peer.listener_id] {
    int c = ::accept(fd, nullptr, nullptr);
    const std::string answer = "SEEN 127.0.0.1 " + id + "\n";
    if (c >= 0) (void)!::send(c, answer.data(), answer.size(), MSG_NOSIGNAL), read_until_closed(c);
  });
  peer.port = ntohs(a.sin_port);
  r = probe_link({"lo", "127.0.0.1", peer, 2s, 0ms, keyed("tok")});
  impostor.join();
  ::close(fd);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("could not prove the rendezvous token"), std::string::npos) << r.error;
}

// Idle connections must not fill the listener and fail every probe after them:
// 300 idle strangers from the prober's own address take at most 16 places, the oldest silent
// one makes room for each newcomer, and one that sent no hello is closed after 1 s.
TEST(PeerProbe, IdleConnectionsFromTheProbersAddressNeverLockItOut) {
  auto started = PeerProbeListener::start({{"lo", "127.0.0.1", 0, ""}}, 30s);
  ASSERT_TRUE(started.value) << started.error;
  ProbeEndpoint peer = (*started.value)->endpoints()[0];
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) idle.push_back(connect_and_send(peer, ""));
  LinkResult r = probe_link({"lo", "127.0.0.1", peer, 2s, 0ms, {}});
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(read_until_closed(idle.back()), "") << "an idle stranger got an answer";  // closed, by deadline or eviction
  for (std::size_t i = 0; i + 1 < idle.size(); ++i) ::close(idle[i]);
}

TEST(PeerProbe, ClosedPortAndSilentPeerFailInBoundedTimeWithAReason) {
  // A port nobody listens on: refused.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int closed_port = ntohs(a.sin_port);
  LinkResult refused = probe_link({"lo", "127.0.0.1", {"lo", "127.0.0.1", closed_port, ""}, 2s, 0ms, {}});
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("refused"), std::string::npos) << refused.error;

  // A listener that accepts (backlog) and never answers: no probe reply within 2 s.
  ASSERT_EQ(::listen(fd, 4), 0);
  auto before = std::chrono::steady_clock::now();
  LinkResult silent = probe_link({"lo", "127.0.0.1", {"lo", "127.0.0.1", closed_port, ""}, 2s, 0ms, {}});
  EXPECT_FALSE(silent.ok);
  EXPECT_NE(silent.error.find("no probe answer"), std::string::npos) << silent.error;
  EXPECT_LT(std::chrono::steady_clock::now() - before, 10s);  // bounded (generous: not a timing test)
  ::close(fd);
}

TEST(CandidateEndpoints, UpInterfacesWithAnAddressLoopbackOnlyWhenAsked) {
  std::vector<NetInterface> interfaces = {{"lo", true, true, {"127.0.0.1"}, {"::1"}},
                                          {"eth0", true, false, {"10.0.0.1"}, {}},
                                          {"eth1", false, false, {"10.0.1.1"}, {}},
                                          {"eth2", true, false, {}, {"2001:2::5"}},
                                          {"eth3", true, false, {}, {}}};
  auto remote = candidate_endpoints(interfaces, false);
  ASSERT_EQ(remote.size(), 2u);
  EXPECT_EQ(remote[0].ifname, "eth0");
  EXPECT_EQ(remote[1].address, "2001:2::5");
  EXPECT_EQ(candidate_endpoints(interfaces, true).size(), 3u);
}

}  // namespace

namespace {

using namespace ddplaunch::preflight;

TEST(ProbeEndpoints, RoundTripIPv4AndIPv6AndRejectHostileText) {
  std::vector<ProbeEndpoint> endpoints = {{"eth0", "10.0.0.1", 41233, "00ff"}, {"eth1", "2001:2::1", 41234, "00ff"}};
  const std::string text = encode_endpoints(endpoints);
  EXPECT_EQ(text, "00ff;eth0=10.0.0.1:41233,eth1=[2001:2::1]:41234");
  auto back = decode_endpoints(text);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].address, "2001:2::1");
  EXPECT_EQ((*back)[1].port, 41234);
  EXPECT_EQ((*back)[1].listener_id, "00ff");
  EXPECT_TRUE(decode_endpoints("")->empty());
  for (const char* bad : {"a;eth0", "a;eth0=10.0.0.1", "a;eth0=10.0.0.1:0", "a;eth0=10.0.0.1:70000",
                          "a;eth0=host.example:80", "a;=10.0.0.1:80", "a;averyveryverylongname=10.0.0.1:80",
                          "a;eth0=10.0.0.1:80,", "a;e\nth=10.0.0.1:1", "eth0=10.0.0.1:80", "XY;eth0=10.0.0.1:80",
                          ";eth0=10.0.0.1:80"})
    EXPECT_FALSE(decode_endpoints(bad)) << bad;
}

}  // namespace
