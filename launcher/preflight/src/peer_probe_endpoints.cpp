// The peer probe's endpoints as one text field (peer_probe.h): what a node advertises in its
// join facts and every other node reads. Parsed strictly: it comes from the network.
#include <arpa/inet.h>

#include <charconv>

#include "ddplaunch/preflight/peer_probe.h"

namespace ddplaunch::preflight {

namespace {

constexpr std::size_t kMaxEndpoints = 64;

bool numeric_address(const std::string& address) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, address.c_str(), buffer) == 1 || inet_pton(AF_INET6, address.c_str(), buffer) == 1;
}

bool valid_ifname(const std::string& name) {
  return !name.empty() && name.size() <= 15 && name.find_first_of("=,[]: \t\n") == std::string::npos;
}

}  // namespace

std::string encode_endpoints(const std::vector<ProbeEndpoint>& endpoints) {
  std::string out;
  for (const auto& e : endpoints) {
    if (!out.empty()) out += ',';
    const bool v6 = e.address.find(':') != std::string::npos;
    out += e.ifname + "=" + (v6 ? "[" + e.address + "]" : e.address) + ":" + std::to_string(e.port);
  }
  return out;
}

std::optional<std::vector<ProbeEndpoint>> decode_endpoints(const std::string& text) {
  std::vector<ProbeEndpoint> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    auto eq = item.find('=');
    auto colon = item.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq) return std::nullopt;
    ProbeEndpoint e;
    e.ifname = item.substr(0, eq);
    e.address = item.substr(eq + 1, colon - eq - 1);
    if (e.address.size() >= 2 && e.address.front() == '[' && e.address.back() == ']')
      e.address = e.address.substr(1, e.address.size() - 2);
    const std::string port = item.substr(colon + 1);
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), e.port);
    if (ec != std::errc{} || end != port.data() + port.size() || e.port < 1 || e.port > 65535) return std::nullopt;
    if (!valid_ifname(e.ifname) || !numeric_address(e.address)) return std::nullopt;
    out.push_back(e);
    if (out.size() > kMaxEndpoints) return std::nullopt;
  }
  return out;
}

}  // namespace ddplaunch::preflight
