// The rendezvous server: lives inside the master node's ddplaunch, on the caller's io_context
// (single-threaded, never blocks). Admits nodes, assigns node ranks, hands out the launcher's
// plan, keeps heartbeats, and relays launcher messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch::rendezvous {

struct ServerOptions {
  std::string job_id;
  int expected_nodes = 1;
  std::string token;  // empty: no auth
  // What a status query (`ddplaunch status|stacks|tail|debug|timeline`) must prove: the job's
  // token, or, on a job without one, a token the master's launcher made and keeps in its own
  // private job record, so that only its user can ask. Empty: the job's token.
  std::string query_token;
  // A one-launcher job: the launcher's own node joins with this secret instead of a token
  // proof (no HMAC, so no libcrypto at start) and its frames go unsealed. Sound because the
  // secret lives only in this process's memory and travels only over a connection the launcher
  // opens to its own listening port on its own host: nobody else can hold that port, and only
  // root could read that traffic (root reads the job record anyway). Status queries still
  // prove the token. Empty: every join proves the token.
  std::string own_node_secret;
  std::chrono::milliseconds join_timeout{300000}, handshake_timeout{5000},
      heartbeat_interval{1000}, heartbeat_timeout{10000}, progress_interval{2000};
  // At rest the master sends (and receives) about this many frames a second: beyond
  // heartbeat_interval x this many nodes, the interval and the timeout grow with the node count
  // and every heartbeat tells the node the pace (keepalive_pace.h); a node that reports more
  // often than its pace sends no heartbeat (the launcher's rank reports, the same budget:
  // launcher/policy/rank_report_period.h). 0: never stretched.
  std::size_t keepalive_budget_per_s = 400;
  std::size_t max_frame_bytes = 1 << 20;
  // Which launchers may join, what an assignment lists, how long close() may take:
  std::string launcher_version;        // non-empty: a join with a different one is refused
  std::size_t max_listed_nodes = 256;  // Assignment::nodes is filled only up to this many nodes
  std::chrono::milliseconds close_flush_bound{1000};  // close(): time allowed to flush writes
  // Bounds on peers that have not joined yet (not proved the token): what a stranger can make
  // the master spend. A real join is ~1.5 KB; 16 KiB leaves room for long names and many
  // addresses. Over the cap per source address a new connection is closed at once, before any
  // greeting; at the global cap new connections wait ungreeted in the master's own queue (as
  // many as the job has places left), then in the kernel's backlog, until a handshake ends (a
  // crowd of real nodes joins in turn, without retrying).
  std::size_t max_handshake_frame_bytes = 16 << 10;
  std::size_t max_unjoined_connections = 128;          // from all sources together
  std::size_t max_unjoined_per_address = 16;           // from one source address
  // A join for a node rank whose holder (same host) has been silent this many heartbeat
  // intervals replaces it: the node restarted while its old connection lingers half-open.
  int silent_intervals_before_replace = 2;
  // Membership: the launcher, not the server, decides which joined launchers are
  // the nodes of each generation (begin_generation with member ids). Up to expected_nodes +
  // max_spares launchers may be joined at once, before and after the start; a join is
  // reported through on_member_joined and the server never plans by itself.
  bool launcher_assigns_slots = false;
  int max_spares = 0;
  // Query connections held open (`ddplaunch status --watch`, tail, debug: one connection each,
  // proved once): at most this many at once (a further one is refused, saying so), and the
  // longest a query may wait for its answer to change.
  std::size_t max_held_queries = 32;
  std::chrono::milliseconds max_query_wait{30000};
  // Non-empty: sent as field kOrderRevisionField of every message to the nodes (the etcd
  // coordinator's election revision: a node obeys no order of an older one).
  std::string order_revision;
};

inline constexpr const char* kOrderRevisionField = "revision";

struct JoinTimeout {
  std::vector<std::string> missing;  // "node rank 2" / "2 more nodes (ranks unassigned)"
  std::string what;                  // "join timeout: after 300 s only 3 of 4 nodes have joined; missing: ..."
  bool during_rejoin = false;
};

struct ServerCallbacks {
  // All nodes (re)joined: the launcher decides. nodes are sorted by node_rank.
  std::function<JobPlan(Generation generation, const std::vector<NodeRecord>& nodes)> plan;
  std::function<void(int node_rank, const Message&)> on_message;
  // Heartbeat timeout / connection closed after the first assignment. (Before it, a node that
  // leaves frees its place and is reported through on_refused.)
  std::function<void(const NodeRecord&, const std::string& why)> on_node_lost;
  // Every progress_interval while waiting; missing = "node rank 2" / "2 more nodes (ranks
  // unassigned)" (at most 16 entries, then "... and N more").
  std::function<void(int joined, int expected, const std::vector<std::string>& missing)> on_progress;
  // Called once when the join (or rejoin) wait passes join_timeout. The server keeps
  // waiting; the launcher decides, and ends the wait with abort(reason). Without this
  // callback the server aborts by itself (a wait must end).
  std::function<void(const JoinTimeout&)> on_join_timeout;
  // A join refused or a peer dropped (garbage, oversize, silent, bad token...) — for logging.
  std::function<void(const std::string& peer, const std::string& reason)> on_refused;
  // Membership mode: a launcher joined (record.member_id; record.node_rank = the rank it asked
  // for, -1 = any). It holds no slot until begin_generation gives it one.
  std::function<void(const NodeRecord&)> on_member_joined;
  // Answer to a "status" query connection (ddplaunch status).
  std::function<std::string()> status_text;
  // Answer to a status connection that names a query (`ddplaunch stacks`: "stacks", "stacks 3").
  std::function<std::string(const std::string& query)> query_text;
};

// Why listening failed: the OS error when there is one (a port another process holds is worth
// waiting for; most other errors are not), and the message for people.
struct ListenError {
  boost::system::error_code code;  // empty when the failure is not the OS's (a malformed address)
  std::string text;                // "" on success
  bool failed() const { return !text.empty(); }
  bool port_taken() const { return code == boost::asio::error::address_in_use; }
};

class Server {
 public:
  Server(boost::asio::io_context& io, ServerOptions options, ServerCallbacks callbacks);
  ~Server();  // close()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // "" on success, else error text (EADDRINUSE etc. spelled out). bind_address "" = all IPv4;
  // "::" = all IPv6 and, where the OS allows, IPv4 too (dual-stack).
  std::string listen(const std::string& bind_address, std::uint16_t port);
  // Listens on each address, all on one port (port 0: the first address picks a free one).
  std::string listen(const std::vector<std::string>& bind_addresses, std::uint16_t port);
  ListenError listen_on(const std::vector<std::string>& bind_addresses, std::uint16_t port);  // the same, typed
  std::uint16_t port() const;
  std::vector<std::string> listening_on() const;  // the bound addresses
  void send(int node_rank, const Message& message);  // to one node
  void broadcast(const Message& message);            // to all joined nodes
  // etcd: the coordinator was elected again: its orders carry this revision from now on.
  void set_order_revision(std::string revision);
  // After the launcher broadcast its restart order: wait for every node's rejoin(generation),
  // then call plan() again and send new Assignments. join_timeout applies again. plan() is
  // never called before this returns (the launcher may be carrying out other decisions): when
  // every node is ready already, it is called from the event loop right after.
  void begin_generation(Generation generation);
  // Membership mode: generation G's nodes are these members, slot (node rank) = index. Those
  // in `ran_workers` (the launcher's record of who held a slot in the last plan) must rejoin;
  // the others (spares, new joins) have nothing to stop and count as rejoined at once.
  void begin_generation(Generation generation, const std::vector<int>& member_ids,
                        const std::vector<int>& ran_workers);
  void send_to_member(int member_id, const Message& message);
  // Tells one member why it cannot stay (refusal frame) and closes its connection; no
  // on_node_lost follows for it.
  void dismiss_member(int member_id, const std::string& reason);
  // Stop accepting, close all connections (flushing pending writes, bounded). No callback
  // fires afterwards. Idempotent.
  void close();
  // Tells every joined node the job is off (they report "the master gave up: reason"), then close().
  void abort(const std::string& reason);

  // What the query connections would be answered changed outside any callback (a timer of
  // the launcher's): queries waiting for a different answer are asked again.
  void answers_may_have_changed();

  // The server's state, for the launcher: the current generation and the joined nodes.
  Generation generation() const;
  int joined_count() const;
  std::vector<NodeRecord> joined_nodes() const;  // in join order (node_rank -1: not assigned yet)

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace ddplaunch::rendezvous
