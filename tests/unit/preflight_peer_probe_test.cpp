// The peer probe: the plan (who probes whom), the verdict (which interface, refusals that
// name the pair, slow-link warnings) as pure functions, and the real listener + prober on
// loopback sockets (source check, a refused port, a silent peer, throughput).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

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
                      {{"eth0", "10.0.0." + std::to_string(n + 1), 40000 + n},
                       {"eth1", "10.0.1." + std::to_string(n + 1), 41000 + n}}});
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
  auto started = PeerProbeListener::start({{"lo", "127.0.0.1", 0}}, 30s);
  ASSERT_TRUE(started.value) << started.error;
  auto& listener = *started.value;
  ASSERT_EQ(listener->endpoints().size(), 1u);
  ASSERT_GT(listener->endpoints()[0].port, 0);

  LinkResult r = probe_link({"lo", "127.0.0.1", listener->endpoints()[0], 2s, 100ms});
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
    auto l = PeerProbeListener::start({{"lo", "127.0.0." + std::to_string(n + 1), 0}}, 30s);
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
  EXPECT_NE(table.find("Gbit/s"), std::string::npos) << table;  // loopback is fast
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
  LinkResult refused = probe_link({"lo", "127.0.0.1", {"lo", "127.0.0.1", closed_port}, 2s, 0ms});
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("refused"), std::string::npos) << refused.error;

  // A listener that accepts (backlog) and never answers: no probe reply within 2 s.
  ASSERT_EQ(::listen(fd, 4), 0);
  auto before = std::chrono::steady_clock::now();
  LinkResult silent = probe_link({"lo", "127.0.0.1", {"lo", "127.0.0.1", closed_port}, 2s, 0ms});
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
  std::vector<ProbeEndpoint> endpoints = {{"eth0", "10.0.0.1", 41233}, {"eth1", "2001:2::1", 41234}};
  const std::string text = encode_endpoints(endpoints);
  EXPECT_EQ(text, "eth0=10.0.0.1:41233,eth1=[2001:2::1]:41234");
  auto back = decode_endpoints(text);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].address, "2001:2::1");
  EXPECT_EQ((*back)[1].port, 41234);
  EXPECT_TRUE(decode_endpoints("")->empty());
  for (const char* bad : {"eth0", "eth0=10.0.0.1", "eth0=10.0.0.1:0", "eth0=10.0.0.1:70000", "eth0=host.example:80",
                          "=10.0.0.1:80", "averyveryverylongname=10.0.0.1:80", "eth0=10.0.0.1:80,", "e\nth=10.0.0.1:1"})
    EXPECT_FALSE(decode_endpoints(bad)) << bad;
}

}  // namespace
