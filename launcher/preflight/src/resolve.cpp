// Master-address resolution (getaddrinfo) and the loopback-on-multi-node check.
#include "ddplaunch/preflight/resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>

#include "sockaddr_text.h"

namespace ddplaunch::preflight {

Result<std::vector<std::string>> resolve_host(const std::string& host) {
  if (host.empty()) {
    return Result<std::vector<std::string>>::failure(
        "the master host is empty; pass --master <address of node 0>[:port]");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one entry per address instead of one per socket type
  hints.ai_flags = 0;               // no AI_ADDRCONFIG: a host with only lo must still resolve
  addrinfo* list = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &list);
  if (rc != 0) {
    return Result<std::vector<std::string>>::failure(
        "cannot resolve host '" + host + "': " + gai_strerror(rc) +
        ". Check the spelling and this node's DNS or /etc/hosts, or pass the IP address of "
        "node 0 instead.");
  }
  std::vector<std::string> out;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    std::string text = sockaddr_ip_text(ai->ai_addr);
    if (!text.empty() && std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  freeaddrinfo(list);
  if (out.empty()) {
    return Result<std::vector<std::string>>::failure("host '" + host +
                                                     "' resolved to no IPv4/IPv6 address");
  }
  return Result<std::vector<std::string>>::success(std::move(out));
}

bool is_loopback(std::string_view address) {
  std::string lower;
  for (char c : address) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost" || lower == "localhost.") return true;
  std::string text(address);
  if (!text.empty() && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

CheckOutcome check_master_not_loopback(const std::string& host,
                                       const std::vector<std::string>& resolved, int nodes) {
  if (nodes <= 1) return CheckOutcome::pass();
  std::vector<std::string> loopback;
  for (const auto& a : resolved) {
    if (is_loopback(a)) loopback.push_back(a);
  }
  bool host_is_loopback = is_loopback(host);
  bool all_loopback = !resolved.empty() && loopback.size() == resolved.size();
  if (!host_is_loopback && !all_loopback) {
    if (loopback.empty()) return CheckOutcome::pass();
    return CheckOutcome::pass("note: master '" + host + "' also resolves to loopback address " +
                              loopback.front() +
                              " on this node; the other nodes must resolve it to a routable one");
  }
  std::string shown = host;
  if (!loopback.empty() && loopback.front() != host) shown += " (resolves to " + loopback.front() + ")";
  std::string why = "the master address " + shown + " is a loopback address, but the job has " +
                    std::to_string(nodes) + " nodes: loopback only reaches the node itself, so the other " +
                    std::to_string(nodes - 1) +
                    " node(s) would try to reach a master on themselves and hang until the timeout. "
                    "This is the classic MASTER_ADDR=127.0.0.1 mistake. Fix: pass --master <routable "
                    "address of node 0> (e.g. its cluster-network IP, see `hostname -I` on node 0).";
  if (!host_is_loopback) {
    why += " The name '" + host +
           "' maps to loopback on this node, often through an /etc/hosts line like "
           "'127.0.1.1 <hostname>'; use the IP address instead.";
  }
  return CheckOutcome::fail(std::move(why));
}

}  // namespace ddplaunch::preflight
