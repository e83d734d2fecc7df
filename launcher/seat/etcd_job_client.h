// The etcd side of a job that every launcher and `ddplaunch status` share: where its keys
// live (/ddplaunch/<job id>/), an etcd client made from the job's --rdzv-endpoint and
// --rdzv-conf (TLS, user, timeouts), this launcher's address on its route to etcd, and the
// coordinator etcd names.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "config/launch_config.h"
#include "ddplaunch/base/result.h"
#include "etcd/client.h"

namespace ddplaunch {

std::string etcd_job_prefix(const std::string& job_id);    // "/ddplaunch/<job id>/"
std::string etcd_election_key(const std::string& job_id);  // the coordinator's election

// Checks the endpoint list and the TLS and user settings; nothing is sent yet.
Result<std::shared_ptr<etcd::Client>> etcd_job_client(boost::asio::io_context& io, const LaunchConfig& config);

// This launcher's address for the others: the source of its route to the first etcd member
// (where it hosts the rendezvous if elected). An unresolvable or unroutable endpoint is an
// error that names it.
Result<std::string> etcd_route_address(const std::string& endpoints);

// `ddplaunch status/stacks` with --rdzv-backend etcd: the coordinator's published address,
// asked of etcd (bounded by the client's timeouts); an error says why there is none.
Result<std::string> find_coordinator(const LaunchConfig& config);

}  // namespace ddplaunch
