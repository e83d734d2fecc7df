// The peer probe: before any worker starts, every node proves that it can reach
// its peers — not only the master — over each candidate interface, with the source address
// the peer really sees (NAT), the round trip and a short throughput sample.
//
// A node opens a PeerProbeListener (one TCP listener per candidate address, ephemeral port)
// and advertises its endpoints; a prober calls probe_link() once per (peer, interface).
// Wire (text lines, tiny): prober → "DDPLPROBE1 echo|bulk\n"; listener → "SEEN <ip> <id>\n";
// bulk: the prober then streams its sample and counts what the peer's kernel acknowledged;
// the listener reads and drops it until EOF. With a job token both lines carry a MAC
// (ProbeAuth): "DDPLPROBE1 echo|bulk <nonce> <mac>", "SEEN <ip> <id> <mac>". Nothing about the
// job is sent, and the listener bounds its connections in count (in all and per source
// address), time (1 s for the hello) and work (idle strangers cannot crowd out a probe).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

struct ProbeEndpoint {
  std::string ifname;   // interface name on the listening node
  std::string address;  // numeric IPv4/IPv6 on that interface
  int port = 0;
  std::string listener_id;  // random per listener: a probe proves it reached that node, not
                            // another host with the same address (docker0's 172.17.0.1)
};

// The endpoints as one text field for the join facts:
// "<listener id>;eth0=10.0.0.1:41233,eth1=[2001:2::1]:41234" (the id of the first endpoint).
std::string encode_endpoints(const std::vector<ProbeEndpoint>& endpoints);
// nullopt when malformed (a peer's facts are not trusted): id 1..32 hex digits, names
// 1..15 characters without '=' or ',', addresses numeric, ports 1..65535; at most 64 endpoints.
std::optional<std::vector<ProbeEndpoint>> decode_endpoints(const std::string& text);

// Interfaces a node offers: up, with an address (IPv4 first, then IPv6 if it has no IPv4),
// loopback only when `include_loopback` (every node of the job on this machine). Port 0.
std::vector<ProbeEndpoint> candidate_endpoints(const std::vector<NetInterface>& interfaces, bool include_loopback);

// With a job token, probes are authenticated both ways: the hello proves the prober knows the
// token (and names the listener it is for), the answer proves the listener does (and is bound
// to the hello's nonce). The launcher supplies the MAC (HMAC-SHA256 keyed with the token:
// preflight holds no cryptography); empty: no token, no MACs, the old lines.
struct ProbeAuth {
  std::function<std::string(std::string_view message)> mac;      // hex digest of a message
  std::function<bool(std::string_view, std::string_view)> same;  // constant-time comparison
  bool enabled() const { return static_cast<bool>(mac) && static_cast<bool>(same); }
};

class PeerProbeListener {
 public:
  // Listens on each endpoint's address (port 0: the kernel picks); endpoints that cannot
  // be bound are left out (their interface then cannot be chosen). Serves until stop() or
  // destruction, at most `lifetime`.
  static Result<std::unique_ptr<PeerProbeListener>> start(std::vector<ProbeEndpoint> endpoints,
                                                          std::chrono::milliseconds lifetime, ProbeAuth auth = {});
  ~PeerProbeListener();
  PeerProbeListener(const PeerProbeListener&) = delete;
  PeerProbeListener& operator=(const PeerProbeListener&) = delete;

  const std::vector<ProbeEndpoint>& endpoints() const { return endpoints_; }  // with their ports
  void stop();

 private:
  PeerProbeListener() = default;
  void serve(std::chrono::steady_clock::time_point until);

  std::vector<ProbeEndpoint> endpoints_;
  std::string id_;
  ProbeAuth auth_;
  std::vector<int> listen_fds_;
  int wake_pipe_[2] = {-1, -1};
  std::thread thread_;
};

struct LinkProbe {
  std::string ifname;         // the interface on the probing node (SO_BINDTODEVICE when allowed)
  std::string local_address;  // this node's address on it: the source the peer must see
  ProbeEndpoint peer;         // the peer's listener on its interface of the same name
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds sample{300};  // throughput sample; 0 = none
  ProbeAuth auth;                          // the job's token, when it has one
};

struct LinkResult {
  bool ok = false;
  std::string error;      // for people: "timed out after 2 s", "source address rewritten (NAT) ..."
  double rtt_ms = -1;     // hello → SEEN
  double mbit_per_s = -1; // bytes the peer counted / sample time; -1 when not measured
  std::string seen_as;    // the source address the peer saw
};

// One bounded probe: connect from local_address (bound to ifname where permitted) to the
// peer, check the source the peer saw, and sample throughput. Never longer than
// connect_timeout + sample + 2 s.
LinkResult probe_link(const LinkProbe& probe);

}  // namespace ddplaunch::preflight
