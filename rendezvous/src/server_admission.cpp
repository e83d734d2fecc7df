// Rendezvous server admission: join/rejoin/status handling, carrying out join_rules.h's
// answers (refusals, the launcher's plan as one Assignment per node), and a restarted node
// replacing its silent old connection.
#include "handshake.h"
#include "join_rules.h"
#include "ddplaunch/rendezvous/printable.h"
#include "server_impl.h"

namespace ddplaunch::rendezvous {

void Server::Impl::refuse(const PeerPtr& peer, const std::string& reason) {
  Frame f = detail::bare_frame(detail::kRefuse);  // refusals may come before any proof
  f.fields["reason"] = reason;
  peer->conn->send(f);
  peer->leave(opt_.close_flush_bound);
  unjoined_.end_handshake(peer.get());
  notify_refused(peer->conn->peer(), reason);
}

void Server::Impl::handle_status(const PeerPtr& peer, Frame& f) {
  // Nothing but this refusal (which says a master listens here) for a peer that proved nothing.
  const std::string& key = opt_.query_token.empty() ? opt_.token : opt_.query_token;
  if (!key.empty() && !detail::find_field(f.fields, "proof")) return refuse(peer, "query refused: it proves no token");
  if (auto why = detail::check_request(key, opt_.job_id, peer->nonce, f); !why.empty()) {
    refuse(peer, "query refused: " + why);
    return;
  }
  const std::string* hold = detail::find_field(f.fields, "hold");
  if (hold && *hold == "1" && held_queries_.full())
    return refuse(peer, "query refused: the master holds " + std::to_string(held_queries_.count()) +
                            " query connections already (status --watch, tail, debug), its most; try again when one ends");
  peer->welcome(key, f);
  if (hold && *hold == "1") {  // from now on its status frames are queries, answered one by one
    unjoined_.end_handshake(peer.get());
    held_queries_.hold(peer);
    return held_queries_.take(peer, f);
  }
  const std::string* query = detail::find_field(f.fields, "query");
  Frame reply = frame_of(detail::kStatusReply);
  reply.fields["text"] = answer_query(query ? *query : std::string());
  if (phase_ == Phase::kClosed) return;
  peer->conn->send(reply);
  peer->leave(opt_.close_flush_bound);
  unjoined_.end_handshake(peer.get());
}

std::string Server::Impl::answer_query(const std::string& query) {
  if (!query.empty()) return cb_.query_text ? cb_.query_text(query) : "error: the master answers no queries";
  return cb_.status_text ? cb_.status_text() : "(the master provides no status)";
}

void Server::Impl::handle_join(const PeerPtr& peer, Frame& f) {
  // This launcher's own node (ServerOptions::own_node_secret): no proof, no seal either way.
  const bool own_node = detail::claims_own_node(f);
  const std::string why = own_node ? detail::check_own_node(opt_.own_node_secret, opt_.job_id, f)
                                   : detail::check_request(opt_.token, opt_.job_id, peer->nonce, f);
  if (!why.empty()) return refuse(peer, why);
  peer->welcome(own_node ? std::string() : opt_.token, f);
  NodeFacts facts;
  std::string error;
  if (!detail::get_facts(f.fields, "f.", facts, error))
    return refuse(peer, "malformed join from " + peer->conn->peer_ip() + ": " + error);
  std::string who = "host '" + facts.hostname + "' (" + peer->conn->peer_ip() + ")";
  admit(peer, std::move(facts), who);
}

// One admission for both modes. Without membership the server admits the job's nodes until
// they are all there, then plans; with membership (launcher_assigns_slots) it admits
// launchers at any time up to the nodes plus the spares, and the launcher (JobPolicy's
// Membership) says which of them are the nodes of each generation, in which slot.
void Server::Impl::admit(const PeerPtr& peer, NodeFacts facts, const std::string& who) {
  const bool admitting = opt_.launcher_assigns_slots || phase_ == Phase::kWaitingJoins;
  for (const std::string& why : {join_rules::launcher_version_refusal(opt_, facts, who),
                                 join_rules::node_count_refusal(opt_, facts, who),
                                 join_rules::no_room_refusal(opt_, admitting, static_cast<int>(nodes_.count()), who)}) {
    if (!why.empty()) return refuse(peer, why);
  }
  // With membership, once the job runs, where a late launcher goes is the launcher's call: its
  // rank is a wish for the first generation only. (A rank at or above the node count stays as
  // asked before the start: the launcher reads it as "a spare".)
  const int rank = opt_.launcher_assigns_slots && planned_once_ ? -1 : facts.requested_node_rank;
  std::string holder;
  if (const PeerPtr held_by = nodes_.holder(rank); held_by && !replace_silent_holder(rank, facts))
    holder = "host '" + held_by->record.facts.hostname + "' (" + held_by->conn->peer_ip() + ")";
  if (std::string why = join_rules::requested_rank_refusal(opt_, rank, who, holder); !why.empty())
    return refuse(peer, why);
  unjoined_.end_handshake(peer.get());
  peer->join_as(std::move(facts), rank, opt_.max_frame_bytes);
  nodes_.add(peer);
  // A job paced slower than configured says so at once (sealed, in the welcome's write): the
  // node then sends its heartbeats at that pace from the start, none while the others join.
  if (pace_.interval > opt_.heartbeat_interval) {
    Frame pace = frame_of(detail::kHeartbeat);
    detail::put_pace_announcement(pace, pace_.interval);
    peer->conn->send(pace);
    peer->pace_told = pace_.interval;
  }
  if (opt_.launcher_assigns_slots) {
    peer->record.member_id = next_member_id_++;
    if (cb_.on_member_joined && phase_ != Phase::kClosed) cb_.on_member_joined(peer->record);
  } else if (static_cast<int>(nodes_.count()) == opt_.expected_nodes) {
    plan_generation();
  }
  held_queries_.may_have_changed();  // the joining table shows it
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
  maybe_plan_after_this_call();  // every node may be ready already
}

void Server::Impl::maybe_plan() {
  if (phase_ == Phase::kWaitingRejoins && nodes_.every_slot_ready(generation_)) plan_generation();
}

// The launcher starts a generation while carrying out its own decisions: it is asked for the
// plan from the event loop, once that call returned, never inside it.
void Server::Impl::maybe_plan_after_this_call() {
  boost::asio::post(io_, [self = shared_from_this(), generation = generation_] {
    if (self->generation_ == generation) self->maybe_plan();
  });
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
  const auto assignments = join_rules::assignments_for(generation_, records, plan);
  if (const auto* refusal = std::get_if<std::string>(&assignments)) {
    Frame f = frame_of(detail::kRefuse);
    f.fields["reason"] = *refusal;
    for (const auto& p : nodes_.in_join_order()) p->conn->send(f);
    close();
    return;
  }
  const std::string node_list = records.size() <= opt_.max_listed_nodes ? detail::encode_node_list(records) : "";
  const auto& each = std::get<std::vector<Assignment>>(assignments);
  for (std::size_t r = 0; r < each.size(); ++r) {
    Frame f = frame_of(detail::kAssign);
    detail::put_assignment(f, each[r]);
    nodes_.slots()[r]->conn->send(f, node_list);
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
  if (silent < pace_.interval * opt_.silent_intervals_before_replace) return false;
  drop(holder, "host '" + printable(joining.hostname) + "' joined again as node rank " + std::to_string(rank) +
                   " while this connection had been silent for " + detail::format_seconds(silent) +
                   " (a restarted node; the old connection was left half-open), so the new one replaces it");
  return true;
}

}  // namespace ddplaunch::rendezvous
