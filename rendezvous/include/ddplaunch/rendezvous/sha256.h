// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the join proof: no token on the wire.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddplaunch::rendezvous {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);
std::string to_hex(const std::uint8_t* data, std::size_t n);
inline std::string to_hex(const Sha256Digest& d) { return to_hex(d.data(), d.size()); }
// Compares without an early exit, so timing does not reveal how much of a proof was right.
bool equal_constant_time(std::string_view a, std::string_view b);
// The join/status proof: hex HMAC-SHA256(token, nonce || job_id).
std::string join_proof(std::string_view token, std::string_view nonce, std::string_view job_id);

}  // namespace ddplaunch::rendezvous
