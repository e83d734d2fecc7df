// MAC lines on frame bodies; see frame_seal.h.
#include "frame_seal.h"

namespace ddplaunch::rendezvous::detail {
namespace {

constexpr std::string_view kMacPrefix = "mac=";
constexpr std::size_t kMacLine = kMacPrefix.size() + 64 + 1;

std::string mac_of(const Digest& key, std::uint64_t sequence, std::string_view body) {
  std::string message = std::to_string(sequence);
  message += '\n';
  message += body;
  const std::string_view key_bytes(reinterpret_cast<const char*>(key.data()), key.size());
  return to_hex(hmac_sha256(key_bytes, message));
}

}  // namespace

void FrameSeal::seal_tail(std::string& buffer, std::size_t body_start) {
  std::string mac = mac_of(send_key_, sent_++, std::string_view(buffer).substr(body_start));
  buffer += kMacPrefix;
  buffer += mac;
  buffer += '\n';
}

std::optional<std::string_view> FrameSeal::open(std::string_view body, std::string& error) {
  const std::uint64_t sequence = received_;
  if (body.size() < kMacLine || body.back() != '\n' ||
      body.substr(body.size() - kMacLine, kMacPrefix.size()) != kMacPrefix ||
      (body.size() > kMacLine && body[body.size() - kMacLine - 1] != '\n')) {
    error = "frame " + std::to_string(sequence) + " after the handshake carries no MAC";
    return std::nullopt;
  }
  std::string_view inner = body.substr(0, body.size() - kMacLine);
  std::string_view mac = body.substr(body.size() - kMacLine + kMacPrefix.size(), 64);
  if (!equal_constant_time(mac, mac_of(receive_key_, sequence, inner))) {
    error = "frame " + std::to_string(sequence) +
            " after the handshake fails its MAC (altered, injected, replayed or reordered on the way)";
    return std::nullopt;
  }
  ++received_;
  return inner;
}

FrameSeal master_seal(const SessionKeys& keys) { return FrameSeal(keys.master_to_node, keys.node_to_master); }
FrameSeal node_seal(const SessionKeys& keys) { return FrameSeal(keys.node_to_master, keys.master_to_node); }

}  // namespace ddplaunch::rendezvous::detail
