// Numeric address text <-> sockaddr conversions used across the preflight module.
#include "sockaddr_text.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstring>

namespace ddplaunch::preflight {

std::string sockaddr_ip_text(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa == nullptr) return {};
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf) == nullptr) return {};
  } else if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf) == nullptr) return {};
  } else {
    return {};
  }
  return buf;
}

std::optional<socklen_t> parse_ip_literal(const std::string& ip, int port, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  std::string text = ip;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return static_cast<socklen_t>(sizeof(sockaddr_in));
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  std::string scope;
  if (auto pct = text.find('%'); pct != std::string::npos) {
    scope = text.substr(pct + 1);
    text = text.substr(0, pct);
  }
  if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    if (!scope.empty()) v6->sin6_scope_id = if_nametoindex(scope.c_str());
    return static_cast<socklen_t>(sizeof(sockaddr_in6));
  }
  return std::nullopt;
}

}  // namespace ddplaunch::preflight
