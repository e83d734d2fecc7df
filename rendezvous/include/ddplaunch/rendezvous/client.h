// The rendezvous client: one per node, on the caller's io_context (single-threaded, never
// blocks). Connects to the master (retrying until join_timeout), proves the token, joins,
// keeps heartbeats, and reports assignments, refusals and loss through callbacks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::rendezvous {

struct ClientOptions {
  std::string job_id;
  std::string token;
  // Set only by the launcher that hosts the server it joins (ServerOptions::own_node_secret):
  // it then proves itself with this secret instead of the token, and its frames go unsealed.
  std::string own_node_secret;
  std::string host;
  std::uint16_t port = 0;
  std::chrono::milliseconds connect_timeout{5000}, join_timeout{300000}, retry_interval{500},
      heartbeat_interval{1000}, heartbeat_timeout{10000};
  // After a peer that answered but is not this job's master (it could not prove the token,
  // or it does not speak the rendezvous protocol): the first pause before connecting again,
  // doubled after each such answer up to the last. A squatter or impostor on the port costs
  // one connection per pause, not one per round trip.
  std::chrono::milliseconds impostor_retry_first{1000}, impostor_retry_most{5000};
  std::size_t max_frame_bytes = 1 << 20;
  // The local address the connection is made from ("": the kernel's choice), for benches that
  // simulate many nodes on one machine (bench/simulated_launchers: one source address per
  // share, as real nodes have, since the master admits few unproven peers per address).
  std::string source_address;
  // Addition, for tests of the version check only: the protocol version this client claims.
  int protocol_version = kProtocolVersion;
};

struct ClientCallbacks {
  std::function<void(const Assignment&)> on_assignment;  // first one and every one after a rejoin
  // Server refused us (job id, version, token, duplicate rank, too many nodes, plan refusal).
  std::function<void(const std::string& reason)> on_refused;
  std::function<void(const Message&)> on_message;  // launcher messages from the master
  // Connection lost / heartbeat timeout / join timeout / could not connect (with host:port).
  std::function<void(const std::string& why)> on_lost;
  std::function<void(int joined, int expected, const std::vector<std::string>& missing)> on_progress;
  // A peer answered on the master's port but is not this job's master; the client connects
  // again until the join timeout. Called when the reason differs from the last one reported.
  std::function<void(const std::string& why)> on_impostor;
};

// After on_refused or on_lost the client is closed; no callback fires after close().
class Client {
 public:
  Client(boost::asio::io_context& io, ClientOptions options, ClientCallbacks callbacks);
  ~Client();  // close()
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Resolve + connect (retry until join_timeout; connect_timeout per attempt), handshake, join.
  void join(const NodeFacts& facts);
  // After a restart order, when local workers are stopped. join_timeout applies again.
  void rejoin(Generation generation);
  void send(const Message& message);
  // The master keeps this node as a hot spare: it waits for an assignment as long as the job
  // runs (no join deadline; heartbeats still bound a silent master).
  void wait_as_spare();
  std::string local_address() const;  // local IP of the connection (for NIC selection)
  double rtt_ms() const;              // connect time at first, then smoothed heartbeat RTT
  void close();

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Why a query to the master got no answer: the kind for the caller's decisions (a master
// that nothing listens for any more has ended), the text for people.
struct QueryFailure {
  enum class Kind {
    None,            // answered
    NoAnswer,        // nothing within the timeout
    Unresolved,      // the host name does not resolve
    NothingListens,  // the connection was refused: no master on that port (any more)
    CannotConnect,   // another connect error (unreachable, timed out)
    Refused,         // the master refused the query (another job's id, a wrong token)
    UnprovenMaster,  // the answer did not prove the token
    Lost,            // the connection broke before the answer
  };
  Kind kind = Kind::None;
  std::string text;
  bool failed() const { return kind != Kind::None; }
};

// For `ddplaunch status`: connect, ask, get text, bounded by timeout. Runs its own private
// io_context (it blocks the caller, so never call it from inside a running event loop).
// Returns the text; on failure returns "" and sets `failure`.
std::string query_status(const std::string& host, std::uint16_t port, std::string job_id,
                         std::string token, std::chrono::milliseconds timeout, QueryFailure& failure);
// The same connection naming a query (part of the signed request): the master's answer to it.
std::string query_master(const std::string& host, std::uint16_t port, std::string job_id, std::string token,
                         const std::string& query, std::chrono::milliseconds timeout, QueryFailure& failure);

}  // namespace ddplaunch::rendezvous
