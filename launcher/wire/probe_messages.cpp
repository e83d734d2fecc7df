// Codec of the peer probe's results and verdict.
#include "wire/probe_messages.h"

#include <sstream>

#include "wire/message_fields.h"

namespace ddplaunch::messages {

// One line per link, tab-separated: from to ifname source destination ok rtt_ms mbit error.
rendezvous::Message encode(Generation generation, const ProbeResults& p) {
  std::string lines;
  for (std::size_t i = 0; i < p.links.size() && i < kMaxProbeLinks; ++i) {
    const auto& l = p.links[i];
    std::string error = l.result.error.substr(0, 300);
    for (char& c : error)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    lines += std::to_string(l.pair.from) + "\t" + std::to_string(l.pair.to) + "\t" + l.ifname + "\t" + l.from_address +
             "\t" + l.to_endpoint + "\t" + (l.result.ok ? "1" : "0") + "\t" + std::to_string(l.result.rtt_ms) + "\t" +
             std::to_string(l.result.mbit_per_s) + "\t" + error + "\n";
  }
  return make(Kind::ProbeResults, generation, {{"links", lines}});
}

std::optional<ProbeResults> decode_probe_results(const rendezvous::Message& m) {
  if (!is(m, Kind::ProbeResults)) return std::nullopt;
  ProbeResults p;
  std::istringstream lines(field(m, "links"));
  for (std::string line; std::getline(lines, line);) {
    if (p.links.size() >= kMaxProbeLinks) return std::nullopt;
    std::vector<std::string> parts;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) parts.push_back(cell);
    if (parts.size() == 8) parts.emplace_back();  // an empty error at the end of the line
    if (parts.size() != 9) return std::nullopt;
    preflight::ProbedLink l;
    try {
      l.pair.from = std::stoi(parts[0]);
      l.pair.to = std::stoi(parts[1]);
      l.result.rtt_ms = std::stod(parts[6]);
      l.result.mbit_per_s = std::stod(parts[7]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (l.pair.from < 0 || l.pair.to < 0 || parts[2].empty() || parts[2].size() > 15) return std::nullopt;
    l.ifname = parts[2];
    l.from_address = parts[3];
    l.to_endpoint = parts[4];
    l.result.ok = parts[5] == "1";
    l.result.error = parts[8];
    p.links.push_back(std::move(l));
  }
  return p;
}

rendezvous::Message encode(Generation generation, const ProbeVerdict& p) {
  return make(Kind::ProbeVerdict, generation, {{"ifname", p.ifname}});
}
std::optional<ProbeVerdict> decode_probe_verdict(const rendezvous::Message& m) {
  if (!is(m, Kind::ProbeVerdict)) return std::nullopt;
  return ProbeVerdict{text_field(m, "ifname")};
}

}  // namespace ddplaunch::messages
