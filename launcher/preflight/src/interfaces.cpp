// getifaddrs listing and the kernel's route choice for the master (UDP connect trick).
#include "ddplaunch/preflight/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sockaddr_text.h"
#include "unique_fd.h"

namespace ddplaunch::preflight {
namespace {

// Canonical text of an IP literal ("0:0::1" -> "::1"); "" when not a literal.
std::string canonical_ip(const std::string& ip) {
  sockaddr_storage ss{};
  if (!parse_ip_literal(ip, 0, ss)) return {};
  return sockaddr_ip_text(reinterpret_cast<sockaddr*>(&ss));
}

}  // namespace

Result<std::vector<NetInterface>> list_interfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return Result<std::vector<NetInterface>>::failure(std::string("cannot list network interfaces (getifaddrs): ") +
                                                      std::strerror(errno));
  }
  std::vector<NetInterface> out;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_name == nullptr) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const NetInterface& n) { return n.name == ifa->ifa_name; });
    if (it == out.end()) {
      NetInterface fresh;
      fresh.name = ifa->ifa_name;
      out.push_back(std::move(fresh));
      it = out.end() - 1;
    }
    // Flags are per interface; every entry carries them, so the last one seen wins (all equal).
    it->up = (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
    it->loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    if (ifa->ifa_addr == nullptr) continue;
    std::string text = sockaddr_ip_text(ifa->ifa_addr);
    if (text.empty()) continue;  // AF_PACKET and friends
    auto& bucket = ifa->ifa_addr->sa_family == AF_INET ? it->ipv4 : it->ipv6;
    if (std::find(bucket.begin(), bucket.end(), text) == bucket.end()) bucket.push_back(text);
  }
  ::freeifaddrs(list);
  return Result<std::vector<NetInterface>>::success(std::move(out));
}

Result<std::string> route_source_address(const std::string& master_ip) {
  sockaddr_storage ss{};
  // Port 9 (discard): any non-zero port works, connect() on UDP only selects the route.
  auto len = parse_ip_literal(master_ip, 9, ss);
  if (!len) {
    return Result<std::string>::failure("cannot look up the route to '" + master_ip +
                                        "': not a numeric IP address (resolve the name first)");
  }
  UniqueFd fd(::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return Result<std::string>::failure("cannot open a UDP socket to look up the route to " + master_ip +
                                        ": " + std::strerror(errno));
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), *len) != 0) {
    return Result<std::string>::failure("this node has no route to the master " + master_ip + " (" +
                                        std::strerror(errno) +
                                        "); check the address and `ip route get " + master_ip + "`");
  }
  sockaddr_storage local{};
  socklen_t llen = sizeof local;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &llen) != 0) {
    return Result<std::string>::failure("cannot read the source address for the route to " + master_ip +
                                        ": " + std::strerror(errno));
  }
  return Result<std::string>::success(sockaddr_ip_text(reinterpret_cast<sockaddr*>(&local)));
}

std::optional<std::string> interface_for_address(const std::string& local_ip,
                                                 const std::vector<NetInterface>& interfaces) {
  std::string want = canonical_ip(local_ip);
  if (want.empty()) return std::nullopt;
  for (const auto& itf : interfaces) {
    for (const auto* list : {&itf.ipv4, &itf.ipv6}) {
      for (const auto& a : *list) {
        if (canonical_ip(a) == want) return itf.name;
      }
    }
  }
  return std::nullopt;
}

}  // namespace ddplaunch::preflight
