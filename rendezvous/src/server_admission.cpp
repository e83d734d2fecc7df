// Rendezvous server admission: credential checks, join/rejoin/status handling, node-rank
// assignment (a restarted node replacing its silent old connection), and turning the
// launcher's plan into one Assignment per node.
#include "handshake.h"
#include "ddplaunch/rendezvous/printable.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {

void Server::Impl::refuse(const PeerPtr& peer, const std::string& reason) {
  Frame f = detail::bare_frame(detail::kRefuse);  // refusals may come before any proof
  f.fields["reason"] = reason;
  peer->conn->send(f);
  peer->conn->close_graceful(opt_.close_flush_bound);
  peer->state = ServerPeer::State::kGone;
  if (peer->handshake_timer) peer->handshake_timer->cancel();
  unjoined_.end_handshake(peer.get());
  notify_refused(peer->conn->peer(), reason);
}

// After the credentials: the master proves the token in turn, before saying anything else.
// With a token, every frame after the welcome is MACed both ways (frame_seal.h).
void Server::Impl::welcome(const PeerPtr& peer, const Frame& request) {
  peer->conn->send(detail::welcome_for(opt_.token, peer->nonce, request));
  if (auto seal = detail::master_session_seal(opt_.token, peer->nonce, request)) peer->conn->seal_frames(std::move(*seal));
}

void Server::Impl::handle_status(const PeerPtr& peer, Frame& f) {
  if (auto why = detail::check_request(opt_.token, opt_.job_id, peer->nonce, f); !why.empty()) {
    refuse(peer, "status query refused: " + why);
    return;
  }
  welcome(peer, f);
  Frame reply = frame_of(detail::kStatusReply);
  if (auto* query = detail::find_field(f.fields, "query"); query && !query->empty())
    reply.fields["text"] = cb_.query_text ? cb_.query_text(*query) : "error: the master answers no queries";
  else
    reply.fields["text"] = cb_.status_text ? cb_.status_text() : "(the master provides no status)";
  if (phase_ == Phase::kClosed) return;
  peer->conn->send(reply);
  peer->conn->close_graceful(opt_.close_flush_bound);
  peer->state = ServerPeer::State::kGone;
  if (peer->handshake_timer) peer->handshake_timer->cancel();
  unjoined_.end_handshake(peer.get());
}

void Server::Impl::handle_join(const PeerPtr& peer, Frame& f) {
  if (auto why = detail::check_request(opt_.token, opt_.job_id, peer->nonce, f); !why.empty()) return refuse(peer, why);
  welcome(peer, f);
  NodeFacts facts;
  std::string error;
  if (!detail::get_facts(f.fields, "f.", facts, error))
    return refuse(peer, "malformed join from " + peer->conn->peer_ip() + ": " + error);
  std::string who = "host '" + facts.hostname + "' (" + peer->conn->peer_ip() + ")";
  if (!opt_.launcher_version.empty() && facts.launcher_version != opt_.launcher_version) {
    return refuse(peer, "launcher version mismatch: " + who + " runs ddplaunch '" +
                            facts.launcher_version + "', the master runs '" +
                            opt_.launcher_version + "'; install the same ddplaunch on all nodes");
  }
  admit(peer, std::move(facts), who);
}

// One admission for both modes. Without membership the server admits the job's nodes until
// they are all there, then plans; with membership (launcher_assigns_slots) it admits
// launchers at any time up to the nodes plus the spares, and the launcher (JobPolicy's
// Membership) says which of them are the nodes of each generation, in which slot.
void Server::Impl::admit(const PeerPtr& peer, NodeFacts facts, const std::string& who) {
  if (std::string why = check_node_count(facts, who); !why.empty()) return refuse(peer, why);
  if (std::string why = no_room_for(who); !why.empty()) return refuse(peer, why);
  // With membership, once the job runs, where a late launcher goes is the launcher's call: its
  // rank is a wish for the first generation only. (A rank at or above the node count stays as
  // asked before the start: the launcher reads it as "a spare".)
  int req = opt_.launcher_assigns_slots && planned_once_ ? -1 : facts.requested_node_rank;
  if (std::string why = check_requested_rank(facts, who, req); !why.empty()) return refuse(peer, why);
  accept_join(peer, std::move(facts), req);
  if (opt_.launcher_assigns_slots) {
    peer->record.member_id = next_member_id_++;
    if (cb_.on_member_joined && phase_ != Phase::kClosed) cb_.on_member_joined(peer->record);
  } else if (static_cast<int>(nodes_.count()) == opt_.expected_nodes) {
    plan_generation();
  }
}

std::string Server::Impl::no_room_for(const std::string& who) const {
  const bool admitting = opt_.launcher_assigns_slots || phase_ == Phase::kWaitingJoins;
  if (admitting && static_cast<int>(nodes_.count()) < job_places(opt_)) return "";
  if (opt_.launcher_assigns_slots) {
    return "too many launchers: the job has room for " + std::to_string(opt_.expected_nodes) + " nodes and " +
           std::to_string(opt_.max_spares) + " spare(s), and all are here; " + who +
           " is one too many (start every launcher with a larger --spares to keep more spares)";
  }
  return "too many nodes: the job expects " + std::to_string(opt_.expected_nodes) +
         " nodes and all have joined already; " + who +
         " is one too many (check --nodes, or whether a job with this --job-id is already running)";
}

std::string Server::Impl::check_node_count(const NodeFacts& facts, const std::string& who) const {
  if (facts.expected_nodes <= 0 || facts.expected_nodes == opt_.expected_nodes) return "";
  return who + " was started for a job of " + std::to_string(facts.expected_nodes) +
         " nodes, but the master (node 0) for " + std::to_string(opt_.expected_nodes) +
         "; pass the same --nodes / --nnodes on every node";
}

// Checked alike with and without membership. A rank at or above the node count is refused,
// unless the job keeps spares: then the launcher starts as a spare.
std::string Server::Impl::check_requested_rank(const NodeFacts& facts, const std::string& who, int& req) {
  const int expected = opt_.expected_nodes;
  const bool spares_allowed = opt_.launcher_assigns_slots;
  if (req >= expected) {
    if (spares_allowed) return "";  // the launcher reads it as "start me as a spare"
    return who + " asks for node rank " + std::to_string(req) + " but the job has " + std::to_string(expected) +
           " nodes (ranks 0.." + std::to_string(expected - 1) + "); check --node-rank and --nodes";
  }
  if (const PeerPtr holder = nodes_.holder(req); holder && !replace_silent_holder(req, facts)) {
    return "duplicate node rank " + std::to_string(req) + ": " + who + " asks for it but host '" +
           holder->record.facts.hostname + "' (" + holder->conn->peer_ip() +
           ") already holds it; every node needs a distinct --node-rank";
  }
  return "";
}

void Server::Impl::accept_join(const PeerPtr& peer, NodeFacts facts, int req) {
  peer->handshake_timer->cancel();
  unjoined_.end_handshake(peer.get());
  peer->state = ServerPeer::State::kJoined;
  peer->conn->limit_incoming_frames(opt_.max_frame_bytes);  // trusted now: the full limit
  peer->record.facts = std::move(facts);
  peer->record.node_rank = req;
  peer->rank_requested = req >= 0;
  peer->record.observed_address = peer->conn->peer_ip();
  peer->record.rtt_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - peer->hello_sent).count();
  nodes_.add(peer);
}

void Server::Impl::handle_rejoin(const PeerPtr& peer, Frame& f) {
  if (!planned_once_) return;  // nothing to rejoin yet
  peer->ready_for = f.generation;
  if (phase_ == Phase::kWaitingRejoins && f.generation == generation_) {
    maybe_plan();
  }
}

void Server::Impl::begin_generation(Generation generation) {
  if (phase_ == Phase::kClosed || !planned_once_) return;
  generation_ = generation;
  phase_ = Phase::kWaitingRejoins;
  start_wait_timers();
  maybe_plan();  // every node may be ready already
}

void Server::Impl::maybe_plan() {
  if (phase_ == Phase::kWaitingRejoins && nodes_.every_slot_ready(generation_)) plan_generation();
}

void Server::Impl::plan_generation() {
  if (!planned_once_ && !opt_.launcher_assigns_slots) nodes_.rank_in_join_order();
  planned_once_ = true;
  phase_ = Phase::kRunning;
  join_timer_.cancel();
  progress_timer_.cancel();
  const std::vector<NodeRecord> records = nodes_.slot_records();
  JobPlan plan = cb_.plan ? cb_.plan(generation_, records) : JobPlan{};
  if (phase_ == Phase::kClosed) return;
  long long world = 0;
  std::vector<int> offsets(records.size());
  for (std::size_t r = 0; r < records.size(); ++r) {
    offsets[r] = static_cast<int>(world);
    world += records[r].facts.nproc;
  }
  if (plan.refusal.empty() && world > 2147483647LL) plan.refusal = "world size too large";
  if (!plan.refusal.empty()) {
    Frame f = frame_of(detail::kRefuse);
    f.fields["reason"] = plan.refusal;
    for (const auto& p : nodes_.in_join_order()) p->conn->send(f);
    close();
    return;
  }
  std::string tail = records.size() <= opt_.max_listed_nodes ? detail::encode_node_list(records) : "";
  Assignment a;
  a.generation = generation_;
  a.node_count = static_cast<int>(records.size());
  a.world_size = static_cast<int>(world);
  a.worker_master_addr = plan.worker_master_addr;
  a.worker_master_port = plan.worker_master_port;
  a.init_deadline_s = plan.init_deadline_s;
  a.run_id = plan.run_id;
  a.run_nonce = plan.run_nonce;
  for (std::size_t r = 0; r < records.size(); ++r) {
    a.node_rank = static_cast<int>(r);
    a.rank_offset = offsets[r];
    Frame f = frame_of(detail::kAssign);
    detail::put_assignment(f, a);
    nodes_.slots()[r]->conn->send(f, tail);
  }
}

// A node that restarts while its old connection lingers half-open (the machine rebooted, the
// old launcher was frozen) asks for the rank its old self still holds. When the holder is the
// same host and has said nothing for a few heartbeat intervals (a live node answers every
// interval), the old connection is retired and the new join goes ahead.
bool Server::Impl::replace_silent_holder(int rank, const NodeFacts& joining) {
  const PeerPtr holder = nodes_.holder(rank);
  if (!holder || holder->record.facts.hostname != joining.hostname) return false;
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - holder->last_heard);
  if (silent < opt_.heartbeat_interval * opt_.silent_intervals_before_replace) return false;
  drop(holder, "host '" + printable(joining.hostname) + "' joined again as node rank " + std::to_string(rank) +
                   " while this connection had been silent for " + detail::format_seconds(silent) +
                   " (a restarted node; the old connection was left half-open), so the new one replaces it");
  return true;
}

}  // namespace ddplaunch::rendezvous
