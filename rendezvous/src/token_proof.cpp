// HMAC-SHA256, SHA-256 and comparison through OpenSSL's libcrypto, loaded with dlopen the
// first time a token is proven: a launcher without a token never maps it (its load and
// set-up would cost a trivial job about 3 ms). Nonces come from the kernel.
#include "ddplaunch/rendezvous/token_proof.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>

#include "random_pool.h"

#define DDPLAUNCH_STRINGIFY_(x) #x
#define DDPLAUNCH_STRINGIFY(x) DDPLAUNCH_STRINGIFY_(x)
#if OPENSSL_VERSION_MAJOR >= 3
#define DDPLAUNCH_LIBCRYPTO "libcrypto.so." DDPLAUNCH_STRINGIFY(OPENSSL_SHLIB_VERSION)
#else
#define DDPLAUNCH_LIBCRYPTO "libcrypto.so." SHLIB_VERSION_NUMBER
#endif

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

// The few libcrypto functions the proofs use, resolved once (thread-safe static init) from
// the library the headers belong to.
struct Libcrypto {
  decltype(&::EVP_sha256) evp_sha256 = nullptr;
  decltype(&::EVP_Digest) evp_digest = nullptr;
  decltype(&::HMAC) hmac = nullptr;
  decltype(&::CRYPTO_memcmp) crypto_memcmp = nullptr;
  std::string error;  // "" when every function was found
};

// <prefix>/lib/ddplaunch/deps/libcrypto.so.N for the running binary <prefix>/bin/ddplaunch,
// when that file exists ("" otherwise).
std::string bundled_libcrypto() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return {};
  std::string dir(exe, static_cast<std::size_t>(n));
  dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  std::string path = dir + "/../lib/ddplaunch/deps/" DDPLAUNCH_LIBCRYPTO;
  return ::access(path.c_str(), R_OK) == 0 ? path : std::string{};
}

template <typename Fn>
void resolve(void* lib, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (fn == nullptr && error.empty()) error = std::string(DDPLAUNCH_LIBCRYPTO " lacks ") + name;
}

const Libcrypto& libcrypto() {
  static const Libcrypto loaded = [] {
    Libcrypto c;
    // A copied prefix's own copy first (bench/run gpu-bundle: lib/ddplaunch/deps beside bin/),
    // by absolute path; then the system's. Kept loaded for the process.
    void* lib = nullptr;
    if (std::string bundled = bundled_libcrypto(); !bundled.empty()) lib = ::dlopen(bundled.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = ::dlopen(DDPLAUNCH_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = ::dlerror();
      c.error = std::string("cannot load OpenSSL's " DDPLAUNCH_LIBCRYPTO " for the token proof (") +
                (why ? why : "unknown error") + "); install OpenSSL 3's libcrypto (Debian: libssl3)";
      return c;
    }
    resolve(lib, "EVP_sha256", c.evp_sha256, c.error);
    resolve(lib, "EVP_Digest", c.evp_digest, c.error);
    resolve(lib, "HMAC", c.hmac, c.error);
    resolve(lib, "CRYPTO_memcmp", c.crypto_memcmp, c.error);
    return c;
  }();
  return loaded;
}

}  // namespace

std::string token_crypto_error() { return libcrypto().error; }

Digest sha256(std::string_view data) {
  Digest out{};
  unsigned int n = 0;
  const Libcrypto& c = libcrypto();
  if (c.error.empty()) c.evp_digest(data.data(), data.size(), out.data(), &n, c.evp_sha256(), nullptr);
  return out;
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  Digest out{};
  unsigned int n = 0;
  const Libcrypto& c = libcrypto();
  if (!c.error.empty()) return out;
  // A zero-length key is legal in HMAC; OpenSSL wants a non-null pointer for it.
  static const unsigned char kEmpty = 0;
  const void* key_data = key.empty() ? &kEmpty : static_cast<const void*>(key.data());
  c.hmac(c.evp_sha256(), key_data, static_cast<int>(key.size()),
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
  if (a.empty()) return true;
  const Libcrypto& c = libcrypto();
  return c.error.empty() && c.crypto_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_nonce() {
  // The kernel's generator (getrandom, what RAND_bytes seeds from), a page at a time
  // (random_pool.h): every rendezvous draws nonces, with or without a token, and only a token
  // needs libcrypto.
  unsigned char bytes[kNonceHexChars / 2] = {};
  static_assert(sizeof bytes <= detail::kMaxRandomDraw);
  if (!detail::draw_random(bytes, sizeof bytes)) return "";
  std::string nonce = to_hex(bytes, sizeof bytes);
  explicit_bzero(bytes, sizeof bytes);  // a nonce may become a secret (a token): no copy left behind
  return nonce;
}

std::string node_proof(std::string_view token, std::string_view master_nonce, std::string_view node_nonce,
                       std::string_view claims) {
  if (!token_crypto_error().empty()) return "";  // never a proof from a zeroed digest
  return to_hex(hmac_sha256(token, proof_message("ddplaunch-join-v2", master_nonce, node_nonce, claims)));
}

std::string master_proof(std::string_view token, std::string_view node_nonce, std::string_view master_nonce,
                         std::string_view claims) {
  if (!token_crypto_error().empty()) return "";
  return to_hex(hmac_sha256(token, proof_message("ddplaunch-master-v2", node_nonce, master_nonce, claims)));
}

SessionKeys session_keys(std::string_view token, std::string_view master_nonce, std::string_view node_nonce,
                         std::string_view claims) {
  SessionKeys keys;
  if (!token_crypto_error().empty()) return keys;
  keys.master_to_node = hmac_sha256(token, proof_message("ddplaunch-frames-m2n-v2", master_nonce, node_nonce, claims));
  keys.node_to_master = hmac_sha256(token, proof_message("ddplaunch-frames-n2m-v2", master_nonce, node_nonce, claims));
  return keys;
}

}  // namespace ddplaunch::rendezvous
