// Certificates for TLS tests, made with the `openssl` command in a directory of the test's:
// a CA, a server certificate it signed for 127.0.0.1 (IP SAN), a client certificate it
// signed, and a second CA that signed neither (the "wrong CA"). EC P-256 keys: quick to make.
#pragma once

#include <string>

namespace ddplaunch::testing {

inline constexpr const char* kOpensslBinary = "/usr/bin/openssl";
inline constexpr const char* kNoOpenssl = "the openssl command is not installed at /usr/bin/openssl (Debian: openssl)";

struct TestCertificates {
  std::string ca, ca_key;               // ca.pem, ca.key
  std::string server_cert, server_key;  // for IP:127.0.0.1, signed by ca
  std::string client_cert, client_key;  // signed by ca (extendedKeyUsage clientAuth)
  std::string other_ca;                 // a CA that signed nothing here
};

bool openssl_available();

// Makes them under `dir`; "" or why not (the failing command and its output).
std::string make_test_certificates(const std::string& dir, TestCertificates& out);

}  // namespace ddplaunch::testing
