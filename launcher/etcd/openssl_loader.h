// Internal to the etcd module: OpenSSL's libssl.so.3 loaded on the first TLS use, and the
// trampolines of openssl_functions.h pointed at it (see there why: the start-up cost).
#pragma once

#include <string>

namespace ddplaunch::etcd::detail {

// Loads it once (thread-safe): a copied prefix's own copy first (bench/run gpu-bundle:
// lib/ddplaunch/deps beside bin/), else the system's. "" or why not, with what to install.
const std::string& load_openssl();

}  // namespace ddplaunch::etcd::detail
