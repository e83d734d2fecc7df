// Every job is authenticated: the tokens a launcher makes, and who may drive its debuggers.
#include "agent/job_authentication.h"

#include "ddplaunch/rendezvous/token_proof.h"

namespace ddplaunch {

namespace {
// One launcher is the whole job: no other node, no spare or elastic room, no etcd seat that
// another launcher could take. Nobody else needs to know its token.
bool one_launcher_job(const LaunchConfig& config) {
  return config.nodes == 1 && !membership_enabled(config) && !etcd_enabled(config);
}

const char* const kNoRandomness = "cannot draw a random token for this job (getrandom failed)";
}  // namespace

std::string authenticate_job(NodePlan& plan) {
  LaunchConfig& config = plan.config;
  if (one_launcher_job(config)) {
    if (config.token.empty()) {
      config.token = rendezvous::random_nonce();
      if (config.token.empty()) return kNoRandomness;
      plan.record_token = true;  // ddplaunch made it: the job record keeps it for status and debug
    }
    // Its own join is the only one: proven by an in-memory secret, no token HMAC at start.
    plan.own_node_secret = rendezvous::random_nonce();
    if (plan.own_node_secret.empty()) return kNoRandomness;
  }
  if (!config.token.empty()) {
    plan.query_token = config.token;
    return "";
  }
  // A tokenless multi-node job: the nodes share no secret, but the launcher that hosts its
  // rendezvous (with etcd: may host it) answers queries only to its own user, through its record.
  if (plan.host_server || etcd_enabled(config)) {
    plan.query_token = rendezvous::random_nonce();
    if (plan.query_token.empty()) return kNoRandomness;
  }
  return "";
}

bool master_may_reach_ranks(const LaunchConfig& config, bool joins_own_server) {
  return !config.token.empty() || joins_own_server;
}

}  // namespace ddplaunch
