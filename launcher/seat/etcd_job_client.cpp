// The etcd side of a job that every launcher and `ddplaunch status` share: see etcd_job_client.h.
#include "seat/etcd_job_client.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ddplaunch/base/time_units.h"
#include "ddplaunch/preflight/interfaces.h"
#include "ddplaunch/preflight/resolve.h"
#include "etcd/endpoints.h"

namespace ddplaunch {

std::string etcd_job_prefix(const std::string& job_id) { return "/ddplaunch/" + job_id + "/"; }

std::string etcd_election_key(const std::string& job_id) { return etcd_job_prefix(job_id) + "coordinator"; }

Result<std::shared_ptr<etcd::Client>> etcd_job_client(boost::asio::io_context& io, const LaunchConfig& config) {
  using R = Result<std::shared_ptr<etcd::Client>>;
  auto endpoints = etcd::parse_endpoints(config.etcd.endpoints, "--rdzv-endpoint");
  if (!endpoints) return R::failure(endpoints.error);
  auto tls = etcd::uses_tls(*endpoints, config.etcd.protocol == EtcdProtocol::Https, "--rdzv-endpoint");
  if (!tls) return R::failure(tls.error);
  if (!*tls && !(config.etcd.cacert + config.etcd.cert + config.etcd.key).empty())
    return R::failure(
        "--rdzv-conf cacert/cert/key are TLS files, but etcd is spoken to over plain http: add protocol=https "
        "(or write the endpoints as https://HOST:2379)");
  etcd::ClientOptions options;
  options.endpoints = *endpoints;
  options.connect_timeout = seconds_to_ms(std::min(config.connect_timeout_s, 3.0));
  options.request_timeout = seconds_to_ms(std::max(config.etcd.lease_ttl_s, 2.0));
  options.tls = *tls;
  options.tls_files = {config.etcd.cacert, config.etcd.cert, config.etcd.key};
  options.credentials = {config.etcd.username, config.etcd.password,
                         config.etcd.password_file.empty() ? "DDPLAUNCH_ETCD_PASSWORD"
                                                           : "--rdzv-conf password_file=" + config.etcd.password_file};
  return etcd::Client::create(io, std::move(options));
}

Result<std::string> etcd_route_address(const std::string& endpoints) {
  auto list = etcd::parse_endpoints(endpoints, "--rdzv-endpoint");
  if (!list) return Result<std::string>::failure(list.error);
  const etcd::Endpoint& first = list->front();
  auto resolved = preflight::resolve_host(first.host);
  if (!resolved)
    return Result<std::string>::failure(fmt::format("etcd endpoint {} (--rdzv-endpoint): {}", first.text(), resolved.error));
  auto source = preflight::route_source_address(resolved->front());
  if (!source)
    return Result<std::string>::failure(fmt::format("etcd endpoint {} (--rdzv-endpoint): {}", first.text(), source.error));
  return source;
}

Result<std::string> find_coordinator(const LaunchConfig& config) {
  boost::asio::io_context io;
  auto client = etcd_job_client(io, config);
  if (!client) return Result<std::string>::failure(client.error);
  std::optional<Result<std::optional<etcd::KeyValue>>> answer;
  (*client)->leader(etcd_election_key(config.job_id),
                    [&](Result<std::optional<etcd::KeyValue>> r) { answer = std::move(r); });
  io.run();  // one request, bounded by the client's connect and request timeouts
  if (!answer || !*answer) return Result<std::string>::failure(answer ? answer->error : "etcd gave no answer");
  if (!**answer || (**answer)->value.empty())
    return Result<std::string>::failure(fmt::format("etcd has no coordinator for job '{}' under {}: the job is not "
                                                    "running (or --rdzv-id names another job)",
                                                    config.job_id, etcd_job_prefix(config.job_id)));
  return Result<std::string>::success((**answer)->value);
}

}  // namespace ddplaunch
