// NCCL/Gloo socket-interface specs: parsing with each library's rules, and the check against
// this node's interfaces and the route to the master.
#include "ddplaunch/preflight/socket_ifname.h"

#include <algorithm>

namespace ddplaunch::preflight {
namespace {

const NetInterface* find_interface(const std::vector<NetInterface>& interfaces, std::string_view name) {
  for (const auto& i : interfaces) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

bool entry_matches(const std::string& entry, std::string_view name, bool exact) {
  return exact ? name == entry : name.substr(0, entry.size()) == entry;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string interface_names(const std::vector<NetInterface>& interfaces) {
  std::vector<std::string> names;
  for (const auto& i : interfaces) names.push_back(i.name + (i.up ? "" : " (down)"));
  return names.empty() ? "none" : join(names, ", ");
}

}  // namespace

IfnameDialect dialect_for_variable(std::string_view variable_name) {
  return variable_name == "GLOO_SOCKET_IFNAME" ? IfnameDialect::Gloo : IfnameDialect::Nccl;
}

IfnameSpec parse_ifname_spec(std::string_view spec, IfnameDialect dialect) {
  IfnameSpec out;
  out.dialect = dialect;
  if (spec.size() < 2) {
    out.ignored = true;
    return out;
  }
  if (dialect == IfnameDialect::Gloo) {
    out.exact = true;
    // Like c10d::split (std::getline on ','): pieces kept as-is, a trailing ',' adds nothing.
    size_t start = 0;
    while (start < spec.size()) {
      size_t comma = spec.find(',', start);
      if (comma == std::string_view::npos) comma = spec.size();
      out.names.emplace_back(spec.substr(start, comma - start));
      start = comma + 1;
    }
    return out;
  }
  if (!spec.empty() && spec.front() == '^') {
    out.exclude = true;
    spec.remove_prefix(1);
  }
  if (!spec.empty() && spec.front() == '=') {
    out.exact = true;
    spec.remove_prefix(1);
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view entry = spec.substr(start, comma - start);
    entry = entry.substr(0, entry.find(':'));  // "eth0:1234" filters a port, not the name
    if (!entry.empty()) out.names.emplace_back(entry);
    start = comma + 1;
  }
  return out;
}

bool ifname_matches(const IfnameSpec& spec, std::string_view interface_name) {
  if (spec.ignored) return false;
  // NCCL: an empty list matches everything, so "^" alone excludes every interface.
  bool listed = spec.names.empty() && spec.dialect == IfnameDialect::Nccl;
  for (const auto& e : spec.names) {
    if (entry_matches(e, interface_name, spec.exact)) listed = true;
  }
  return listed != spec.exclude;
}

std::vector<std::string> selected_interfaces(const IfnameSpec& spec,
                                             const std::vector<NetInterface>& interfaces) {
  std::vector<std::string> out;
  for (const auto& i : interfaces) {
    if (i.has_address() && ifname_matches(spec, i.name)) out.push_back(i.name);
  }
  return out;
}

CheckOutcome check_socket_ifname(std::string_view variable_name, std::string_view spec_text,
                                 const std::vector<NetInterface>& interfaces,
                                 std::string_view route_interface, std::string_view master_address) {
  const std::string var = std::string(variable_name) + "=" + std::string(spec_text);
  const IfnameSpec spec = parse_ifname_spec(spec_text, dialect_for_variable(variable_name));
  if (spec.ignored) {
    return CheckOutcome::pass(var + " is ignored: values shorter than 2 characters count as unset");
  }
  std::vector<std::string> problems;
  const bool gloo = spec.dialect == IfnameDialect::Gloo;

  if (gloo) {
    for (const auto& n : spec.names) {
      if (n.empty()) {
        problems.push_back(var + " has an empty entry (stray comma); gloo would fail to create a "
                           "device for it. Remove the extra comma");
      } else if (n.front() == '^' || n.front() == '=') {
        problems.push_back("GLOO_SOCKET_IFNAME takes exact interface names only; '" + n +
                           "' uses NCCL's ^/= syntax, which gloo reads as part of the name");
      }
    }
  }
  if (!spec.exclude) {
    for (const auto& entry : spec.names) {
      if (entry.empty() || (gloo && (entry.front() == '^' || entry.front() == '='))) continue;
      std::vector<const NetInterface*> hits;
      for (const auto& i : interfaces) {
        if (entry_matches(entry, i.name, spec.exact)) hits.push_back(&i);
      }
      if (hits.empty()) {
        problems.push_back(var + ": no interface " + (spec.exact ? "named '" : "starting with '") + entry +
                           "' on this node (interfaces here: " + interface_names(interfaces) + ")");
        continue;
      }
      bool usable = false;
      for (const auto* h : hits) {
        if (!h->has_address()) continue;  // NCCL skips address-less ones; gloo cannot use them
        if (!h->up) {
          problems.push_back(var + ": interface " + h->name +
                             " is down (not UP and RUNNING) but would be selected; bring it up or "
                             "name another interface");
        } else {
          usable = true;
        }
      }
      if (!usable && std::none_of(hits.begin(), hits.end(), [](auto* h) { return h->has_address() && !h->up; })) {
        problems.push_back(var + ": interface " + hits.front()->name +
                           (hits.size() > 1 ? " (and the other matches)" : "") +
                           " has no IPv4/IPv6 address, so the library cannot use it");
      }
    }
  }

  std::vector<std::string> selected = selected_interfaces(spec, interfaces);
  if (selected.empty() && problems.empty()) {
    problems.push_back(var + " selects no interface with an address on this node (interfaces here: " +
                       interface_names(interfaces) + "); unset it or name an interface that is up");
  }
  const std::string to_master =
      "the route to the master" + (master_address.empty() ? std::string() : " " + std::string(master_address));
  if (!route_interface.empty() && selected.empty()) {
    // Nothing usable selected: say which interface would work, so the fix is one edit.
    problems.push_back(to_master + " leaves through " + std::string(route_interface) + ": set " +
                       std::string(variable_name) + "=" + std::string(route_interface) +
                       ", or unset it and ddplaunch selects that interface");
  }
  if (!route_interface.empty() && !selected.empty()) {
    if (std::find(selected.begin(), selected.end(), route_interface) == selected.end()) {
      problems.push_back(var + " but " + to_master + " leaves through " + std::string(route_interface) + "; set " +
                         std::string(variable_name) + "=" + std::string(route_interface) + " or unset it");
    } else {
      const NetInterface* route = find_interface(interfaces, route_interface);
      bool route_is_loopback = route != nullptr && route->loopback;
      for (const auto& name : selected) {
        const NetInterface* i = find_interface(interfaces, name);
        if (!route_is_loopback && i != nullptr && i->loopback) {
          problems.push_back(var + " also selects the loopback interface " + name +
                             ", which other nodes cannot reach (NCCL's bootstrap takes the first "
                             "selected interface); set " + std::string(variable_name) + "=" +
                             std::string(route_interface) + (spec.exclude ? " or add " + name + " to the exclusion list" : ""));
        }
      }
    }
  }
  if (problems.empty()) return CheckOutcome::pass(var + " selects " + join(selected, ", "));
  return CheckOutcome::fail(join(problems, "; "));
}

}  // namespace ddplaunch::preflight
