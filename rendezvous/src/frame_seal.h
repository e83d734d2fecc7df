// Frame authentication after the handshake: with a token, every frame of a
// connection after the master's welcome ends with a MAC line over its sequence number and its
// body, under the connection's key for that direction (token_proof.h session_keys). A relay
// can then neither alter, inject, drop, replay nor reorder a frame unnoticed. Internal to rendezvous.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/rendezvous/token_proof.h"

namespace ddplaunch::rendezvous::detail {

class FrameSeal {
 public:
  FrameSeal(const Digest& send_key, const Digest& receive_key) : send_key_(send_key), receive_key_(receive_key) {}
  // Appends "mac=<64 hex>\n" = HMAC(send key, "<n>\n" | body) for the n-th frame sent (from 0).
  void seal(std::string& body) { seal_tail(body, 0); }
  // The same for the body that starts at `body_start` of `buffer` and runs to its end.
  void seal_tail(std::string& buffer, std::size_t body_start);
  // The body without its MAC line when it carries the next frame's right MAC; else nullopt
  // and `error` says what was wrong. The sequence is implicit: a replayed, reordered or
  // dropped frame fails like an altered one.
  std::optional<std::string_view> open(std::string_view body, std::string& error);
  std::uint64_t frames_opened() const { return received_; }

 private:
  Digest send_key_, receive_key_;
  std::uint64_t sent_ = 0, received_ = 0;
};

// The seal of each side, for a connection whose handshake proved `token` (none without one).
FrameSeal master_seal(const SessionKeys& keys);
FrameSeal node_seal(const SessionKeys& keys);

}  // namespace ddplaunch::rendezvous::detail
