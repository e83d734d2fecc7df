// The coordinator on etcd over TLS and with etcd's authentication, with real
// launchers and a real etcd on 127.0.0.1 that the test starts, with certificates it makes
// with the openssl command: a job through TLS etcd (and mutual TLS) succeeds; a wrong CA, a
// plain-http server, a name mismatch, a missing client certificate and a wrong password are
// start-up errors (exit 2) in seconds that name the endpoint and the cause; password= on the
// command line is refused. Skipped, saying why, without /usr/bin/etcd or /usr/bin/openssl.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "etcd_cluster.h"
#include "multi_node_job.h"
#include "process_runner.h"
#include "test_certificates.h"

namespace {

using namespace std::chrono_literals;
using ddplaunch::testing::EtcdCluster;
using ddplaunch::testing::RunResult;
using ddplaunch::testing::TestCertificates;

constexpr auto kJobBound = 90s;   // "finished, not hung", on a busy 2-core machine
constexpr auto kStartUpErrorSeconds = 20;

#define SKIP_WITHOUT_ETCD_AND_OPENSSL()                                                          \
  do {                                                                                           \
    if (!EtcdCluster::available()) GTEST_SKIP() << ddplaunch::testing::kNoEtcd;                \
    if (!ddplaunch::testing::openssl_available()) GTEST_SKIP() << ddplaunch::testing::kNoOpenssl; \
  } while (0)

// A temp dir with the test certificates, removed at the end.
struct CertificateDir {
  std::string dir = ddplaunch::testing::temp_dir("ddplaunch-etcd-tls-");
  TestCertificates certs;
  std::string error = ddplaunch::testing::make_test_certificates(dir, certs);
  ~CertificateDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// One launcher of an etcd job of fake_workers; `conf` is added to --rdzv-conf.
std::vector<std::string> launcher_argv(const std::string& endpoints, const std::string& job_id, int nodes,
                                       const std::string& conf) {
  const int coordinator_port = ddplaunch::testing::free_tcp_port();
  return {DDPLAUNCH_BIN, "--rdzv-backend", "etcd", "--rdzv-endpoint", endpoints, "--rdzv-id", job_id, "--nnodes",
          std::to_string(nodes), "--nproc-per-node", "1", "--rdzv-conf",
          "lease_ttl=2,coordinator_port=" + std::to_string(coordinator_port) + (conf.empty() ? "" : "," + conf),
          "--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1", "--no-peer-probe", "--",
          FAKE_WORKER_BIN};
}

// Two launchers of one job, both to the end; the outputs of both when one did not succeed.
void expect_two_node_job_succeeds(const std::string& endpoints, const std::string& conf,
                                  const std::map<std::string, std::string>& env = {}) {
  const std::string job_id = "etcd-tls-" + std::to_string(getpid()) + "-" + std::to_string(ddplaunch::testing::free_tcp_port());
  std::vector<std::unique_ptr<ddplaunch::testing::BackgroundProcess>> nodes;
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(std::make_unique<ddplaunch::testing::BackgroundProcess>());
    ASSERT_TRUE(nodes.back()->start(launcher_argv(endpoints, job_id, 2, conf), env)) << nodes.back()->output_so_far();
  }
  std::vector<RunResult> results;
  std::string all;
  for (auto& n : nodes) {
    results.push_back(n->wait(kJobBound));
    all += "===== launcher\n" + results.back().output;
  }
  for (const auto& r : results) {
    EXPECT_FALSE(r.timed_out) << all;
    EXPECT_EQ(r.exit_code, 0) << all;
  }
  EXPECT_NE(all.find("elected the job's coordinator"), std::string::npos) << all;
}

// One launcher that must fail at start-up: exit 2, in seconds, with every `expected` text.
RunResult expect_start_up_error(const std::string& endpoints, const std::string& conf,
                                const std::vector<std::string>& expected,
                                const std::map<std::string, std::string>& env = {}) {
  RunResult r = ddplaunch::testing::run_command(launcher_argv(endpoints, "etcd-tls-refused", 2, conf), 40s, env);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_LT(r.seconds, kStartUpErrorSeconds) << r.output;
  for (const auto& text : expected) EXPECT_NE(r.output.find(text), std::string::npos) << "no '" << text << "' in\n" << r.output;
  return r;
}

// Each test: its certificates, and etcd members it starts over TLS (tls_etcd).
class EtcdTls : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_ETCD_AND_OPENSSL();
    ASSERT_EQ(d.error, "");
  }
  // One member serving TLS with the server certificate; with `client_cert_auth`, only to
  // clients with a certificate of the CA. "" or why it did not start.
  std::string start_tls_etcd(EtcdCluster& etcd, bool client_cert_auth) {
    etcd.serve_tls({d.certs.server_cert, d.certs.server_key, client_cert_auth ? d.certs.ca : ""});
    return etcd.start(1);
  }
  CertificateDir d;
};

TEST_F(EtcdTls, ATwoNodeJobRunsThroughEtcdOverTls) {
  EtcdCluster etcd;
  ASSERT_EQ(start_tls_etcd(etcd, false), "");
  expect_two_node_job_succeeds(etcd.endpoint(0), "protocol=https,cacert=" + d.certs.ca);
  // https:// in the endpoint list says the same as protocol=https.
  expect_two_node_job_succeeds("https://" + etcd.endpoint(0), "cacert=" + d.certs.ca);
}

TEST_F(EtcdTls, MutualTlsNeedsTheClientCertificate) {
  EtcdCluster etcd;
  ASSERT_EQ(start_tls_etcd(etcd, true), "");
  expect_two_node_job_succeeds(
      etcd.endpoint(0), "protocol=https,cacert=" + d.certs.ca + ",cert=" + d.certs.client_cert + ",key=" + d.certs.client_key);
  expect_start_up_error(etcd.endpoint(0), "protocol=https,cacert=" + d.certs.ca,
                        {etcd.endpoint(0), "--rdzv-endpoint", "TLS", "client certificate", "cert="});
}

TEST_F(EtcdTls, AWrongCaIsAStartUpErrorNamingTheEndpointAndTls) {
  EtcdCluster etcd;
  ASSERT_EQ(start_tls_etcd(etcd, false), "");
  expect_start_up_error(etcd.endpoint(0), "protocol=https,cacert=" + d.certs.other_ca,
                        {etcd.endpoint(0), "--rdzv-endpoint", "TLS", "not signed by cacert=" + d.certs.other_ca,
                         "wrong CA"});
  // The certificate is for IP 127.0.0.1, not for the name localhost.
  const std::string by_name = "localhost:" + etcd.endpoint(0).substr(etcd.endpoint(0).rfind(':') + 1);
  expect_start_up_error(by_name, "protocol=https,cacert=" + d.certs.ca, {by_name, "name mismatch"});
}

TEST_F(EtcdTls, HttpsToAPlainHttpEtcdAndHttpToATlsEtcdAreClearErrors) {
  EtcdCluster plain;
  ASSERT_EQ(plain.start(1), "");
  expect_start_up_error(plain.endpoint(0), "protocol=https,cacert=" + d.certs.ca,
                        {plain.endpoint(0), "TLS", "plain http", "drop --rdzv-conf protocol=https"});
  EtcdCluster tls;
  ASSERT_EQ(start_tls_etcd(tls, false), "");
  expect_start_up_error(tls.endpoint(0), "", {tls.endpoint(0), "protocol=https"});
}

TEST_F(EtcdTls, AnUnreadableTlsFileIsAStartUpErrorNamingItsKey) {
  const std::string missing = d.dir + "/missing.pem";
  expect_start_up_error("127.0.0.1:2379", "protocol=https,cacert=" + missing, {"cacert=" + missing, "cannot read it"});
  expect_start_up_error("127.0.0.1:2379", "protocol=https,cacert=" + d.certs.server_key,
                        {"cacert=" + d.certs.server_key, "not a PEM CA certificate"});
  expect_start_up_error("127.0.0.1:2379",
                        "protocol=https,cacert=" + d.certs.ca + ",cert=" + d.certs.client_cert + ",key=" + d.certs.server_key,
                        {"key=" + d.certs.server_key, "cert=" + d.certs.client_cert});
}

std::string write_secret_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0600);
  return path;
}

TEST(EtcdAuth, AJobRunsAsAnEtcdUserAndAWrongPasswordIsAClearStartUpError) {
  SKIP_WITHOUT_ETCD_AND_OPENSSL();
  if (::access(ddplaunch::testing::kEtcdctlBinary, X_OK) != 0) GTEST_SKIP() << "etcdctl is not installed";
  EtcdCluster etcd;
  ASSERT_EQ(etcd.start(1), "");
  ASSERT_EQ(etcd.enable_auth("s3cret-pw"), "");
  const std::string dir = ddplaunch::testing::temp_dir("ddplaunch-etcd-auth-");
  const std::string good = write_secret_file(dir + "/good", "s3cret-pw\nsecond line is not the password\n");
  const std::string bad = write_secret_file(dir + "/bad", "wrong-pw\n");

  expect_two_node_job_succeeds(etcd.endpoint(0), "username=root,password_file=" + good);
  // The password from the environment instead.
  expect_two_node_job_succeeds(etcd.endpoint(0), "username=root", {{"DDPLAUNCH_ETCD_PASSWORD", "s3cret-pw"}});
  expect_start_up_error(etcd.endpoint(0), "username=root,password_file=" + bad,
                        {etcd.endpoint(0), "--rdzv-endpoint", "user 'root'", "invalid user ID or password",
                         "password_file=" + bad});
  // Without a user, etcd's refusal says what to give.
  expect_start_up_error(etcd.endpoint(0), "", {etcd.endpoint(0), "username=NAME"});
  std::filesystem::remove_all(dir);
}

TEST(EtcdAuth, APasswordOnTheCommandLineIsRefusedSayingWhatToUseInstead) {
  RunResult r = ddplaunch::testing::run_command(launcher_argv("127.0.0.1:2379", "etcd-auth", 2, "username=root,password=pw"),
                                                20s);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("password= is refused"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("password_file=PATH"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DDPLAUNCH_ETCD_PASSWORD"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("=pw"), std::string::npos) << "the password is echoed:\n" << r.output;
}

}  // namespace
