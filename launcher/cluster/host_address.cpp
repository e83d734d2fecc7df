// Node name -> address: the system resolver, then Slurm's NodeAddr via scontrol.
#include "ddplaunch/cluster/host_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

namespace ddplaunch::cluster {
namespace {

// getaddrinfo(name), first IPv4 answer, else first IPv6; error text on failure.
std::optional<std::string> lookup(const std::string& name, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(name.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    error = gai_strerror(rc);
    return std::nullopt;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(res, freeaddrinfo);
  std::optional<std::string> v4, v6;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET && !v4) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, buf, sizeof buf);
      v4 = buf;
    } else if (a->ai_family == AF_INET6 && !v6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, buf,
                sizeof buf);
      v6 = buf;
    }
  }
  if (v4) return v4;
  if (v6) return v6;
  error = "no IPv4 or IPv6 address";
  return std::nullopt;
}

// Slurm node names are hostnames; anything else is refused before reaching a shell.
bool safe_node_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '-') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

// Runs `scontrol show node -o NAME` (5 s bound) and returns its NodeAddr.
std::optional<std::string> scontrol_node_addr(const std::string& name) {
  if (!safe_node_name(name)) return std::nullopt;
  std::string cmd = fmt::format(
      "command -v scontrol >/dev/null 2>&1 && timeout 5 scontrol show node -o '{}' 2>/dev/null",
      name);
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return std::nullopt;
  std::string out;
  char buf[4096];
  while (out.size() < (1u << 16)) {
    std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get());
    if (n == 0) break;
    out.append(buf, n);
  }
  return parse_scontrol_node_addr(out);
}

}  // namespace

std::optional<std::string> parse_scontrol_node_addr(const std::string& out) {
  // Fields are "Key=Value" separated by spaces; NodeAddr is preceded by a space or
  // starts the line, so "NodeAddrX=" or "ActiveNodeAddr=" would not match.
  std::size_t pos = 0;
  while ((pos = out.find("NodeAddr=", pos)) != std::string::npos) {
    if (pos == 0 || out[pos - 1] == ' ' || out[pos - 1] == '\n' || out[pos - 1] == '\t') {
      std::size_t begin = pos + 9;
      std::size_t end = out.find_first_of(" \t\r\n", begin);
      std::string value = out.substr(begin, end == std::string::npos ? end : end - begin);
      if (value.empty() || value == "(null)") return std::nullopt;
      return value;
    }
    pos += 9;
  }
  return std::nullopt;
}

HostAddress resolve_slurm_host(const std::string& name) {
  HostAddress r;
  r.name = name;
  std::string error;
  if (auto a = lookup(name, error)) {
    r.address = *a;
    r.how = "resolver";
    return r;
  }
  std::string scontrol_note = "scontrol gave no NodeAddr";
  if (auto node_addr = scontrol_node_addr(name)) {
    std::string error2;
    if (auto a = lookup(*node_addr, error2)) {
      r.address = *a;
      r.how = fmt::format("scontrol NodeAddr={}", *node_addr);
      return r;
    }
    scontrol_note = fmt::format("its Slurm NodeAddr \"{}\" does not resolve either ({})",
                                *node_addr, error2);
  }
  r.error = fmt::format(
      "cannot find an address for Slurm node \"{}\": {}; {}. On clusters whose node names do "
      "not resolve, pass the master's address yourself: --master ADDRESS[:PORT]",
      name, error, scontrol_note);
  return r;
}

}  // namespace ddplaunch::cluster
