// HMAC-SHA256, SHA-256, nonces and comparison through OpenSSL's libcrypto.
#include "ddplaunch/rendezvous/token_proof.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace ddplaunch::rendezvous {
namespace {

// Fields are joined with '\n': nonces and digests are hex, so no field can contain it and
// no two different inputs give the same message.
std::string proof_message(std::string_view label, std::string_view first_nonce, std::string_view second_nonce,
                          std::string_view claims) {
  std::string message(label);
  for (std::string_view part : {first_nonce, second_nonce}) {
    message += '\n';
    message += part;
  }
  message += '\n';
  message += to_hex(sha256(claims));
  return message;
}

}  // namespace

Digest sha256(std::string_view data) {
  Digest out{};
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &n, EVP_sha256(), nullptr);
  return out;
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  Digest out{};
  unsigned int n = 0;
  // A zero-length key is legal in HMAC; OpenSSL wants a non-null pointer for it.
  static const unsigned char kEmpty = 0;
  const void* key_data = key.empty() ? &kEmpty : static_cast<const void*>(key.data());
  HMAC(EVP_sha256(), key_data, static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(), &n);
  return out;
}

std::string to_hex(const unsigned char* data, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 0xf];
  }
  return out;
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  // The length of a proof is public (always 64 hex characters); only its content is secret.
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_nonce() {
  unsigned char bytes[kNonceHexChars / 2] = {};
  if (RAND_bytes(bytes, sizeof bytes) != 1) return "";
  return to_hex(bytes, sizeof bytes);
}

std::string node_proof(std::string_view token, std::string_view master_nonce, std::string_view node_nonce,
                       std::string_view claims) {
  return to_hex(hmac_sha256(token, proof_message("ddplaunch-join-v2", master_nonce, node_nonce, claims)));
}

std::string master_proof(std::string_view token, std::string_view node_nonce, std::string_view master_nonce,
                         std::string_view claims) {
  return to_hex(hmac_sha256(token, proof_message("ddplaunch-master-v2", node_nonce, master_nonce, claims)));
}

}  // namespace ddplaunch::rendezvous
