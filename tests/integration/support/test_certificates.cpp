// Test certificates made with the openssl command; see test_certificates.h.
#include "test_certificates.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {
namespace {

// Runs one openssl command (bounded); "" or the command and its output.
std::string openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kOpensslBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run_command(argv, std::chrono::seconds(20));
  if (r.exit_code == 0) return {};
  std::string line;
  for (const auto& a : argv) line += a + " ";
  return line + "failed:\n" + r.output;
}

// A key and a certificate signed by `ca` with the extensions in `extensions`.
std::string signed_pair(const std::string& dir, const std::string& name, const std::string& subject,
                        const std::string& extensions, const std::string& ca, const std::string& ca_key) {
  const std::string ext = dir + "/" + name + ".ext";
  std::ofstream(ext) << extensions << "\n";
  if (auto e = openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                        dir + "/" + name + ".key", "-out", dir + "/" + name + ".csr", "-subj", subject});
      !e.empty())
    return e;
  return openssl({"x509", "-req", "-in", dir + "/" + name + ".csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                  "-out", dir + "/" + name + ".pem", "-days", "2", "-extfile", ext});
}

std::string self_signed_ca(const std::string& dir, const std::string& name) {
  return openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                  dir + "/" + name + ".key", "-out", dir + "/" + name + ".pem", "-days", "2", "-subj",
                  "/CN=ddplaunch test " + name, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign"});
}

}  // namespace

bool openssl_available() { return ::access(kOpensslBinary, X_OK) == 0; }

std::string make_test_certificates(const std::string& dir, TestCertificates& out) {
  out.ca = dir + "/ca.pem";
  out.ca_key = dir + "/ca.key";
  out.server_cert = dir + "/server.pem";
  out.server_key = dir + "/server.key";
  out.client_cert = dir + "/client.pem";
  out.client_key = dir + "/client.key";
  out.other_ca = dir + "/other-ca.pem";
  if (auto e = self_signed_ca(dir, "ca"); !e.empty()) return e;
  if (auto e = self_signed_ca(dir, "other-ca"); !e.empty()) return e;
  if (auto e = signed_pair(dir, "server", "/CN=127.0.0.1",
                           "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth", out.ca, out.ca_key);
      !e.empty())
    return e;
  return signed_pair(dir, "client", "/CN=ddplaunch-test-client", "extendedKeyUsage=clientAuth", out.ca, out.ca_key);
}

}  // namespace ddplaunch::testing
