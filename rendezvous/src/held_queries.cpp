// HeldQueries: held query connections, their waiting queries, one timer for all of them.
#include "held_queries.h"

#include <algorithm>
#include <charconv>

#include "wire.h"

namespace ddplaunch::rendezvous {

std::string answer_digest(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a: cheap, and a collision only delays an answer
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return std::to_string(hash);
}

HeldQueries::HeldQueries(boost::asio::io_context& io, QueryDesk& desk, std::size_t max_held,
                         std::chrono::milliseconds max_wait)
    : io_(io), desk_(desk), max_held_(max_held), max_wait_(max_wait), timer_(io) {}

HeldQueries::Held* HeldQueries::find(const ServerPeer* peer) {
  auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& h) { return h.peer.get() == peer; });
  return it == held_.end() ? nullptr : &*it;
}

void HeldQueries::hold(const PeerPtr& peer) {
  peer->state = ServerPeer::State::kQuerying;
  held_.push_back(Held{peer, std::nullopt, Clock::now(), {}, std::nullopt});
  arm_timer();  // its idle limit
}

void HeldQueries::release(const ServerPeer* peer) {
  held_.erase(std::remove_if(held_.begin(), held_.end(), [&](const Held& h) { return h.peer.get() == peer; }),
              held_.end());
}

void HeldQueries::take(const PeerPtr& peer, const Frame& request) {
  Held* held = find(peer.get());
  if (!held) return;
  if (closed_) return give_last_word(*held, request);
  // One answer outstanding per connection: a query that waits is answered before the next.
  if (held->waiting) {
    Waiting earlier = std::move(*held->waiting);
    held->waiting.reset();
    std::string text = desk_.answer_query(earlier.query);
    if (!(held = find(peer.get())) || closed_) return;
    send(*held, earlier.seq, std::move(text));
  }
  held->last_asked = Clock::now();
  auto field = [&](const char* name) {
    const std::string* value = detail::find_field(request.fields, name);
    return value ? *value : std::string();
  };
  const std::string query = field("query"), unless = field("unless"), seq = field("seq"), wait = field("wait_ms");
  held->last_query = query;
  long wait_ms = 0;
  std::from_chars(wait.data(), wait.data() + wait.size(), wait_ms);
  std::string text = desk_.answer_query(query);
  if (!(held = find(peer.get())) || closed_) return;
  if (wait_ms > 0 && !unless.empty() && answer_digest(text) == unless) {
    const auto bound = std::min(std::chrono::milliseconds(wait_ms), max_wait_);
    held->waiting = Waiting{query, unless, seq, Clock::now() + bound};
    arm_timer();
    return;
  }
  send(*held, seq, std::move(text));
  may_have_changed();  // a query can change what others see (a typed console line)
}

void HeldQueries::send(Held& held, const std::string& seq, std::string text) {
  Frame reply = desk_.reply_frame();
  reply.fields["digest"] = answer_digest(text);
  if (!seq.empty()) reply.fields["seq"] = seq;
  reply.fields["text"] = std::move(text);
  held.peer->conn->send(reply);
}

void HeldQueries::may_have_changed() {
  if (closed_ || std::none_of(held_.begin(), held_.end(), [](const Held& h) { return h.waiting.has_value(); }))
    return;
  if (Clock::now() - last_recheck_ < kRecheckSpacing) {  // a burst of changes: one recheck at its end
    recheck_due_ = true;
    return arm_timer();
  }
  recheck(false);
}

// Every waiting query asked again: sent when its answer changed, or (any answer) at its deadline.
void HeldQueries::recheck(bool deadlines_only) {
  const auto now = Clock::now();
  if (!deadlines_only) {
    last_recheck_ = now;
    recheck_due_ = false;
  }
  std::vector<PeerPtr> idle;
  // Answering calls the launcher, which may end connections: walk a copy of who is held.
  std::vector<PeerPtr> peers;
  for (const Held& h : held_) peers.push_back(h.peer);
  for (const PeerPtr& peer : peers) {
    Held* held = find(peer.get());
    if (!held || closed_) continue;
    if (!held->waiting) {
      if (now - held->last_asked > kIdleLimit) idle.push_back(peer);
      continue;
    }
    const bool due = now >= held->waiting->deadline;
    if (deadlines_only && !due) continue;
    std::string text = desk_.answer_query(held->waiting->query);
    if (!(held = find(peer.get())) || closed_ || !held->waiting) continue;
    if (!due && answer_digest(text) == held->waiting->unless) continue;
    Waiting answered = std::move(*held->waiting);
    held->waiting.reset();
    send(*held, answered.seq, std::move(text));
  }
  for (const PeerPtr& peer : idle) {  // asked nothing for minutes: a client gone without a word
    release(peer.get());
    peer->leave(std::chrono::milliseconds(0));
  }
  arm_timer();
}

void HeldQueries::arm_timer() {
  if (closed_) return;  // the timer bounds the last words now
  if (held_.empty()) {
    timer_.cancel();
    return;
  }
  Clock::time_point next = Clock::time_point::max();
  for (const Held& h : held_) next = std::min(next, h.waiting ? h.waiting->deadline : h.last_asked + kIdleLimit);
  const bool due_recheck = recheck_due_;
  if (due_recheck) next = std::min(next, last_recheck_ + kRecheckSpacing);
  timer_.expires_at(next);
  timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive || closed_) return;
    recheck(!recheck_due_);
  });
}

// A waiting query gets the answer as it stands at once. A client between two queries (it
// was reading the last answer) gets, if it asks the same query again within kLastWordLinger,
// the answer as it stood at the close (worked out now: the launcher is not asked after the
// close), so that a watch sees the end it was waiting for; any other query closes it.
void HeldQueries::close(std::chrono::milliseconds flush_bound, bool answer_waiting) {
  if (closed_) return;
  std::vector<PeerPtr> peers;
  for (const Held& h : held_) peers.push_back(h.peer);
  for (const PeerPtr& peer : peers) {
    Held* held = find(peer.get());
    if (!held || !answer_waiting) continue;
    std::string text = desk_.answer_query(held->waiting ? held->waiting->query : held->last_query);
    if (!(held = find(peer.get()))) continue;
    if (!held->waiting) {
      held->last_word = std::move(text);
      continue;
    }
    const std::string seq = held->waiting->seq;
    held->waiting.reset();
    send(*held, seq, std::move(text));
  }
  closed_ = true;
  recheck_due_ = false;
  flush_bound_ = flush_bound;
  std::vector<Held> lingering;
  for (Held& h : held_) {
    if (h.last_word) lingering.push_back(std::move(h));
    else h.peer->leave(flush_bound);
  }
  held_ = std::move(lingering);
  if (held_.empty()) {
    timer_.cancel();
    return;
  }
  timer_.expires_after(kLastWordLinger);
  timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    for (const Held& h : held_) h.peer->leave(flush_bound_);
    held_.clear();
  });
}

void HeldQueries::give_last_word(Held& held, const Frame& request) {
  const std::string* query = detail::find_field(request.fields, "query");
  const std::string* seq = detail::find_field(request.fields, "seq");
  if (held.last_word && (query ? *query : std::string()) == held.last_query)
    send(held, seq ? *seq : std::string(), std::move(*held.last_word));
  const PeerPtr peer = held.peer;
  release(peer.get());
  peer->leave(flush_bound_);
}

}  // namespace ddplaunch::rendezvous
