// Fan-out host parsing and selection: see host_selection.h.
#include "ddplaunch/cluster/host_selection.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "ddplaunch/cluster/hostlist.h"

namespace ddplaunch::cluster {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_count(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

bool valid_host_name(std::string_view name) {
  return !name.empty() && name.size() <= 253 && name.front() != '-' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == ':';
         });
}

HostSelection failure(std::string why) { return HostSelection{{}, std::move(why)}; }

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t at = text.find(separator, start);
    if (at == std::string_view::npos) at = text.size();
    out.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  return out;
}

// "host1@host2:0,2" → host → slots (empty set: the whole host).
std::string parse_filter(std::string_view filter, const char* flag, std::map<std::string, std::set<int>>& out) {
  for (std::string_view item : split(filter, '@')) {
    item = trim(item);
    if (item.empty()) return std::string(flag) + " '" + std::string(filter) + "' has an empty entry; write HOST[:SLOT,...]@HOST...";
    std::string_view host = item.substr(0, item.find(':'));
    std::set<int>& slots = out[std::string(host)];
    if (host.size() == item.size()) continue;
    for (std::string_view slot : split(item.substr(host.size() + 1), ',')) {
      int index = -1;
      if (!parse_count(trim(slot), index) || index < 0)
        return std::string(flag) + " '" + std::string(item) + "': '" + std::string(slot) +
               "' is not a slot index; write HOST:0,2 (GPU indices on that host)";
      slots.insert(index);
    }
  }
  return "";
}

}  // namespace

HostSelection parse_host_list(std::string_view list) {
  auto expanded = expand_hostlist(list);
  if (!expanded.ok()) return failure("--hosts '" + std::string(list) + "': " + *expanded.error);
  HostSelection s;
  for (auto& name : expanded.hosts) {
    if (!valid_host_name(name)) return failure("--hosts: '" + name + "' is not a host name");
    if (std::any_of(s.hosts.begin(), s.hosts.end(), [&](const FanoutHost& h) { return h.name == name; }))
      return failure("--hosts names '" + name + "' twice; each host runs one ddplaunch, which starts its workers");
    s.hosts.push_back({name, 0, {}});
  }
  if (s.hosts.empty()) return failure("--hosts is empty; name at least one host, e.g. --hosts node1,node2");
  return s;
}

HostSelection parse_hostfile(std::string_view text, std::string_view origin) {
  HostSelection s;
  int line_number = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_number;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(line_number);
    auto space = line.find_first_of(" \t");
    std::string name(line.substr(0, space));
    FanoutHost host{name, 0, {}};
    if (!valid_host_name(name)) return failure(where + ": '" + name + "' is not a host name");
    if (space != std::string_view::npos) {
      std::string_view rest = trim(line.substr(space));
      if (rest.substr(0, 6) != "slots=" || !parse_count(rest.substr(6), host.slots) || host.slots < 1)
        return failure(where + ": expected 'HOST slots=N' with N >= 1, got '" + std::string(line) + "'");
    }
    if (std::any_of(s.hosts.begin(), s.hosts.end(), [&](const FanoutHost& h) { return h.name == name; }))
      return failure(where + ": host '" + name + "' is listed twice");
    s.hosts.push_back(host);
  }
  if (s.hosts.empty()) return failure(std::string(origin) + " lists no host; write one 'HOST slots=N' per line");
  return s;
}

HostSelection select_hosts(HostSelection all, std::string_view include, std::string_view exclude) {
  if (!all.ok() || (include.empty() && exclude.empty())) return all;
  if (!include.empty() && !exclude.empty())
    return failure("--include and --exclude cannot be combined; use one of them");
  const bool including = !include.empty();
  const char* flag = including ? "--include" : "--exclude";
  std::map<std::string, std::set<int>> filter;
  if (auto why = parse_filter(including ? include : exclude, flag, filter); !why.empty()) return failure(why);
  for (const auto& [name, slots] : filter) {
    auto host = std::find_if(all.hosts.begin(), all.hosts.end(), [&](const FanoutHost& h) { return h.name == name; });
    if (host == all.hosts.end()) return failure(std::string(flag) + " names '" + name + "', which is not among the hosts");
    for (int slot : slots)
      if (host->slots > 0 && slot >= host->slots)
        return failure(std::string(flag) + " names slot " + std::to_string(slot) + " of '" + name + "', which has slots=" +
                       std::to_string(host->slots) + " (indices 0.." + std::to_string(host->slots - 1) + ")");
  }
  HostSelection out;
  for (auto& host : all.hosts) {
    auto f = filter.find(host.name);
    if (including) {
      if (f == filter.end()) continue;
      host.devices.assign(f->second.begin(), f->second.end());
      out.hosts.push_back(host);
    } else if (f == filter.end()) {
      out.hosts.push_back(host);
    } else if (!f->second.empty()) {
      if (host.slots < 1)
        return failure("--exclude '" + host.name + ":...' needs that host's slots (a hostfile line 'HOST slots=N')");
      for (int slot = 0; slot < host.slots; ++slot)
        if (!f->second.count(slot)) host.devices.push_back(slot);
      if (!host.devices.empty()) out.hosts.push_back(host);
    }
  }
  if (out.hosts.empty()) return failure(std::string(flag) + " leaves no host to run on");
  return out;
}

}  // namespace ddplaunch::cluster
