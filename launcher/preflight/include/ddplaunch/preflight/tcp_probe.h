// TCP reachability probe with a connect deadline (non-blocking connect + poll), for
// `ddplaunch doctor` and the worker port. The rendezvous connect is the main proof.
#pragma once

#include <chrono>
#include <string>

namespace ddplaunch::preflight {

enum class ProbeStatus { Connected, Refused, TimedOut, Unreachable, Error };

struct ProbeResult {
  ProbeStatus status = ProbeStatus::Error;
  std::string endpoint;  // "10.0.0.1:29500" or "[fd00::1]:29500"
  int error_code = 0;    // errno of the failure, 0 when connected or timed out
  std::string message;   // user-facing: what happened at endpoint, likely why, what to do
  bool ok() const { return status == ProbeStatus::Connected; }
};

// Connects to `host` (IP literal or name; each resolved address is tried in order while time
// remains) on `port`, never waiting longer than `timeout` in total. Closes the socket at once.
ProbeResult probe_tcp(const std::string& host, int port, std::chrono::milliseconds timeout);

// Maps a connect() errno to a status: ECONNREFUSED -> Refused; ETIMEDOUT -> TimedOut;
// ENETUNREACH/EHOSTUNREACH/EHOSTDOWN/ENETDOWN/EADDRNOTAVAIL -> Unreachable; else Error.
ProbeStatus classify_connect_errno(int err);

const char* to_string(ProbeStatus s);

// The user-facing message of ProbeResult: what happened at endpoint, likely why, what to do.
std::string describe_probe(ProbeStatus status, const std::string& endpoint, int error_code, long timeout_ms);

}  // namespace ddplaunch::preflight
