// The probed links' lines of the peer probe's results.
#include "wire/probe_messages.h"

#include <sstream>

namespace ddplaunch::messages {

std::string ProbeLinkLines::write(const std::vector<preflight::ProbedLink>& links) const {
  std::string lines;
  for (std::size_t i = 0; i < links.size() && i < kMaxProbeLinks; ++i) {
    const auto& l = links[i];
    std::string error = l.result.error.substr(0, kMaxProbeErrorBytes);
    for (char& c : error)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    lines += std::to_string(l.pair.from) + "\t" + std::to_string(l.pair.to) + "\t" + l.ifname + "\t" + l.from_address +
             "\t" + l.to_endpoint + "\t" + (l.result.ok ? "1" : "0") + "\t" + std::to_string(l.result.rtt_ms) + "\t" +
             std::to_string(l.result.mbit_per_s) + "\t" + error + "\n";
  }
  return lines;
}

bool ProbeLinkLines::read(const std::string* sent, std::vector<preflight::ProbedLink>& links) const {
  std::istringstream lines(sent ? *sent : "");
  for (std::string line; std::getline(lines, line);) {
    if (links.size() >= kMaxProbeLinks) return false;
    std::vector<std::string> parts;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) parts.push_back(cell);
    if (parts.size() == 8) parts.emplace_back();  // an empty error at the end of the line
    if (parts.size() != 9) return false;
    preflight::ProbedLink l;
    try {
      l.pair.from = std::stoi(parts[0]);
      l.pair.to = std::stoi(parts[1]);
      l.result.rtt_ms = std::stod(parts[6]);
      l.result.mbit_per_s = std::stod(parts[7]);
    } catch (const std::exception&) {
      return false;
    }
    if (l.pair.from < 0 || l.pair.to < 0 || parts[2].empty() || parts[2].size() > 15) return false;
    l.ifname = parts[2];
    l.from_address = parts[3];
    l.to_endpoint = parts[4];
    l.result.ok = parts[5] == "1";
    l.result.error = parts[8];
    links.push_back(std::move(l));
  }
  return true;
}

}  // namespace ddplaunch::messages
