// NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME: parse them the way NCCL and PyTorch do, and check
// that the named interfaces exist, are up, have an address and include the route to the master.
//
// NCCL syntax (src/misc/socket.cc, src/misc/utils.cc parseStringList/matchIf):
//   "eth,ib"      comma list of PREFIXES: eth0, eth1, ib0 ... all match
//   "^docker,lo"  leading '^': every interface EXCEPT those matching the prefixes
//   "=eth0"       leading '=': EXACT names only (eth0, not eth01)
//   "^=eth0"      exclude exact names
//   Empty entries are skipped; an entry's ":port" suffix is dropped (it filters ports, not names).
//   Only interfaces with an IPv4/IPv6 address are candidates; NCCL's bootstrap uses the FIRST
//   selected one in getifaddrs order, so a selected loopback breaks multi-node jobs.
// Gloo syntax (PyTorch torch/csrc/distributed/c10d/init.cpp): the value is split on ',' and
//   every piece is an EXACT interface name that becomes one gloo device; there is no prefix,
//   '^' or '=' syntax, and an empty piece (e.g. "eth0,") is an error at init.
// Both: a value shorter than 2 characters is ignored (treated as unset) by NCCL and PyTorch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

enum class IfnameDialect { Nccl, Gloo };

// "GLOO_SOCKET_IFNAME" -> Gloo; every other name (NCCL_SOCKET_IFNAME, ...) -> Nccl.
IfnameDialect dialect_for_variable(std::string_view variable_name);

struct IfnameSpec {
  IfnameDialect dialect = IfnameDialect::Nccl;
  bool ignored = false;  // value shorter than 2 characters: the library behaves as if unset
  bool exclude = false;  // NCCL '^'
  bool exact = false;    // NCCL '=' (always true for Gloo)
  std::vector<std::string> names;  // NCCL: non-empty, ":port" cut; Gloo: split as-is (may hold "")
};

IfnameSpec parse_ifname_spec(std::string_view spec, IfnameDialect dialect);

// Whether the name passes the spec's filter (address presence is not considered here).
bool ifname_matches(const IfnameSpec& spec, std::string_view interface_name);

// Interfaces the library would use, in order: matching the filter and having an address.
// An ignored spec selects nothing (the library falls back to its own choice).
std::vector<std::string> selected_interfaces(const IfnameSpec& spec,
                                             const std::vector<NetInterface>& interfaces);

// Checks `spec` (the value of `variable_name`; dialect from dialect_for_variable):
//  - every positive entry names an existing interface (prefix entries: at least one matches),
//    and every matching interface with an address is up;
//  - at least one interface is selected;
//  - route_interface (the interface toward the master; "" when unknown or single-node) is
//    among the selected ones, and then no loopback interface is selected (multi-node);
//  - Gloo: no empty entries and no NCCL-only '^' / '=' syntax.
// All problems are reported in one message; master_address only improves its wording.
CheckOutcome check_socket_ifname(std::string_view variable_name, std::string_view spec,
                                 const std::vector<NetInterface>& interfaces,
                                 std::string_view route_interface,
                                 std::string_view master_address = {});

}  // namespace ddplaunch::preflight
