// The rendezvous handshake's cryptography, on OpenSSL's libcrypto loaded when a token is first
// proven (no home-made primitives): HMAC-SHA256 proofs of the job token, constant-time
// comparison; fresh nonces from the kernel. The token
// itself never crosses the wire. docs/ARCHITECTURE.md "Rendezvous handshake and trust".
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace ddplaunch::rendezvous {

using Digest = std::array<unsigned char, 32>;

// "" when OpenSSL's libcrypto could be loaded (dlopen, on first use: a job without a token
// never loads it), else why not. Without it every digest is zero, every proof "" and no
// proof is ever accepted: callers with a token refuse to go on with this message.
std::string token_crypto_error();

Digest sha256(std::string_view data);
Digest hmac_sha256(std::string_view key, std::string_view message);
std::string to_hex(const unsigned char* data, std::size_t n);
inline std::string to_hex(const Digest& d) { return to_hex(d.data(), d.size()); }
// CRYPTO_memcmp: timing does not reveal how much of a proof was right.
bool equal_constant_time(std::string_view a, std::string_view b);

// 32 bytes from the kernel's getrandom(2), as 64 hex characters; "" when it fails (the caller
// then refuses to go on: a predictable nonce would make proofs replayable).
std::string random_nonce();
inline constexpr std::size_t kNonceHexChars = 64;
// A run's nonce as its first coordinator draws it (part of random_nonce), or "" (none): what an
// assignment or a standby message may carry.
inline bool is_run_nonce(std::string_view text) {
  return text.size() <= kNonceHexChars && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The node's proof: HMAC(token, "ddplaunch-join-v2" | nonce_m | nonce_n | SHA-256(claims)).
// `claims` are the exact bytes the node claims (its join or status request without the
// proof), so a relay can neither alter them nor reuse the proof under another challenge.
std::string node_proof(std::string_view token, std::string_view master_nonce, std::string_view node_nonce,
                       std::string_view claims);
// The master's answer: HMAC(token, "ddplaunch-master-v2" | nonce_n | nonce_m | SHA-256(claims)).
// Another label and order than node_proof, so a node's proof can never pass as the master's.
std::string master_proof(std::string_view token, std::string_view node_nonce, std::string_view master_nonce,
                         std::string_view claims);

// After the welcome, every frame is MACed (frame_seal.h) under a key per direction, bound to
// this connection's challenge and claims like the proofs:
// HMAC(token, "ddplaunch-frames-<direction>-v2" | nonce_m | nonce_n | SHA-256(claims)).
// Zero keys when libcrypto is missing (callers with a token refused to go on before this).
struct SessionKeys {
  Digest master_to_node{}, node_to_master{};
};
SessionKeys session_keys(std::string_view token, std::string_view master_nonce, std::string_view node_nonce,
                         std::string_view claims);

}  // namespace ddplaunch::rendezvous
