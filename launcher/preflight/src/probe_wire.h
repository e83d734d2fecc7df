// The peer probe's two text lines (peer_probe.h), written and checked in one place for both
// sides; with a token each carries a MAC (ProbeAuth). Internal to preflight.
#pragma once

#include <optional>
#include <string>

#include "ddplaunch/preflight/peer_probe.h"

namespace ddplaunch::preflight::probe_wire {

inline constexpr std::size_t kMaxLineBytes = 256;

// `bytes` random bytes from the kernel as hex (an identity or a nonce, not a key).
std::string random_hex(std::size_t bytes);

// The prober's hello, newline included.
std::string hello_line(bool bulk, const std::string& nonce, const ProbeAuth& auth);
struct Hello {
  bool bulk = false;
  std::string nonce;
};
// nullopt when `line` (without its newline) is no hello, or, with a token, its MAC is
// missing or wrong.
std::optional<Hello> read_hello(const std::string& line, const ProbeAuth& auth);

// The listener's answer: the address it saw the prober come from, its id, and with a token
// a MAC binding both to the hello's nonce. Newline included.
std::string seen_line(const std::string& seen_as, const std::string& listener_id, const std::string& nonce,
                      const ProbeAuth& auth);
struct Seen {
  std::string seen_as, listener_id;
};
// nullopt, with `error` for people, when `line` is no answer to `nonce` (or its MAC is wrong).
std::optional<Seen> read_seen(const std::string& line, const std::string& nonce, const ProbeAuth& auth,
                              std::string& error);

}  // namespace ddplaunch::preflight::probe_wire
