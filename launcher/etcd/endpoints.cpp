// Parsing of the etcd endpoint list; see endpoints.h.
#include "etcd/endpoints.h"

#include <algorithm>
#include <charconv>

namespace ddplaunch::etcd {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

Result<Endpoint> parse_one(std::string_view entry, std::string_view flag) {
  using R = Result<Endpoint>;
  const std::string where = std::string(flag) + " entry " + in_quotes(entry);
  std::string_view rest = entry;
  Scheme scheme = Scheme::Unsaid;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    scheme = Scheme::Https;
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
    scheme = Scheme::Http;
  }
  if (rest.ends_with("/")) rest.remove_suffix(1);
  if (rest.find("://") != std::string_view::npos || rest.find('/') != std::string_view::npos)
    return R::failure(where + ": expected HOST:PORT (e.g. 10.0.0.5:2379), not a URL with a path");
  Endpoint ep;
  ep.scheme = scheme;
  std::string_view port_text;
  if (rest.starts_with("[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return R::failure(where + ": an IPv6 address needs brackets and a port: [ADDR]:2379");
    ep.host = std::string(rest.substr(1, close - 1));
    port_text = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos)
      return R::failure(where + ": no port; etcd's client port is usually 2379: " +
                        std::string(rest) + ":2379");
    if (rest.find(':') != colon)
      return R::failure(where + ": an IPv6 address needs brackets: [ADDR]:2379");
    ep.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  }
  if (ep.host.empty()) return R::failure(where + ": no host before the port");
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port == 0 || port > 65535)
    return R::failure(where + ": port " + in_quotes(port_text) + " is not a number from 1 to 65535");
  ep.port = static_cast<std::uint16_t>(port);
  return R::success(std::move(ep));
}

}  // namespace

std::string Endpoint::text() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<std::vector<Endpoint>> parse_endpoints(std::string_view list, std::string_view flag) {
  using R = Result<std::vector<Endpoint>>;
  if (trim(list).empty())
    return R::failure(std::string(flag) + " is empty: give the etcd client endpoints as HOST:2379[,HOST:2379...]");
  std::vector<Endpoint> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    const auto entry = trim(list.substr(start, comma - start));
    if (entry.empty())
      return R::failure(std::string(flag) + " " + in_quotes(list) +
                        " has an empty entry (a stray comma?): HOST:2379[,HOST:2379...]");
    auto ep = parse_one(entry, flag);
    if (!ep) return R::failure(ep.error);
    if (std::find(out.begin(), out.end(), *ep) != out.end())
      return R::failure(std::string(flag) + " names " + ep->text() + " twice");
    out.push_back(*ep);
    start = comma + 1;
  }
  return R::success(std::move(out));
}

Result<bool> uses_tls(const std::vector<Endpoint>& endpoints, bool https_asked, std::string_view flag) {
  const auto said = [&](Scheme s) {
    return std::any_of(endpoints.begin(), endpoints.end(), [s](const Endpoint& e) { return e.scheme == s; });
  };
  if (said(Scheme::Https) && said(Scheme::Http))
    return Result<bool>::failure(std::string(flag) + " mixes http:// and https:// entries: etcd's members serve "
                                 "their clients one way; write them all alike");
  if (said(Scheme::Http) && https_asked)
    return Result<bool>::failure(std::string(flag) + " has http:// entries, but --rdzv-conf protocol=https asks "
                                 "for TLS: drop one of them");
  return Result<bool>::success(https_asked || said(Scheme::Https));
}

}  // namespace ddplaunch::etcd
