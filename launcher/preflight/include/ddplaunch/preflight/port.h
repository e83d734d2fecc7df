// Worker-port checks: range, bindable now (bind + listen with SO_REUSEADDR, as the c10d
// TCPStore on rank 0 will do), distinct from the rendezvous port, and a free-port picker.
#pragma once

#include <string>
#include <string_view>

#include "ddplaunch/preflight/outcome.h"

namespace ddplaunch::preflight {

// 1..65535. `what` names the port in the message ("worker port", "rendezvous port").
CheckOutcome check_port_in_range(int port, std::string_view what = "worker port");

// The rendezvous server (inside ddplaunch on node 0) and rank 0's c10d store cannot share a port.
CheckOutcome check_ports_distinct(int rendezvous_port, int worker_port);

// Binds and listens on bind_address:port with SO_REUSEADDR, then closes. bind_address is an IP
// literal, or "" for every address the way c10d's TCPStore binds (dual-stack "::", which also
// collides with IPv4 holders; 0.0.0.0 when the kernel lacks IPv6). Passing means the port was free at that instant only.
// EADDRINUSE: names the likely holder (likely_port_holder) and suggests --worker-port auto.
CheckOutcome check_port_bindable(const std::string& bind_address, int port);

// Binds port 0 on bind_address and returns the port the kernel chose (closed again, so
// another process may take it before the worker binds; re-check just before spawning).
Result<int> find_free_port(const std::string& bind_address);

// Best guess at what usually holds `port` (c10d store default 29500, rendezvous 29400,
// the ephemeral range of outgoing connections), ending with how to find out for sure.
std::string likely_port_holder(int port);

}  // namespace ddplaunch::preflight
