// Membership: see membership.h.
#include "policy/membership.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/base/name_table.h"
#include "ddplaunch/rendezvous/node_rank_assignment.h"

namespace ddplaunch {

namespace {

constexpr NameTable<MemberRole, 4> kRoleNames{{{
    {MemberRole::Active, "active"},
    {MemberRole::Spare, "spare"},
    {MemberRole::Excluded, "excluded"},
    {MemberRole::Lost, "lost"},
}}};

double seconds(PolicyClock::duration d) { return std::chrono::duration<double>(d).count(); }

PolicyClock::time_point after(PolicyClock::time_point t, double s) {
  return t + std::chrono::duration_cast<PolicyClock::duration>(std::chrono::duration<double>(s));
}

std::string node_name(const Member& m) { return fmt::format("node {} (host {})", m.slot, m.host); }

}  // namespace

std::string_view member_role_name(MemberRole role) { return kRoleNames.name(role); }
std::optional<MemberRole> member_role_from_name(std::string_view name) { return kRoleNames.parse(name); }

Member* Membership::find(int id) {
  auto it = std::find_if(members_.begin(), members_.end(), [id](const Member& m) { return m.id == id; });
  return it == members_.end() ? nullptr : &*it;
}

Member* Membership::oldest_spare(bool reserve_too) {
  Member* best = nullptr;
  for (auto& m : members_) {
    if (m.role != MemberRole::Spare || (!reserve_too && reserved(m))) continue;
    if (!best || std::pair(reserved(m), m.since) < std::pair(reserved(*best), best->since)) best = &m;
  }
  return best;
}

Member* Membership::active_at(int slot) {
  auto it = std::find_if(members_.begin(), members_.end(),
                         [slot](const Member& m) { return m.role == MemberRole::Active && m.slot == slot; });
  return it == members_.end() ? nullptr : &*it;
}

bool Membership::reserve_host(const std::string& host) const {
  const auto& hosts = settings_.reserve_hosts;
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

bool Membership::host_has_node(const std::string& host) const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return m.role == MemberRole::Active && m.host == host; });
}

bool Membership::reserved(const Member& m) const {
  return m.role == MemberRole::Spare && reserve_host(m.host) && !host_has_node(m.host);
}

bool Membership::kept_in_reserve(int id) const {
  const Member* m = member(id);
  return m && reserved(*m);
}

bool Membership::first_of_its_host(int id) const {
  const Member* me = member(id);
  if (!me) return false;
  for (const auto& m : members_) {
    if (m.id == id) return true;
    if (m.host == me->host) return false;
  }
  return false;
}

int Membership::spares_kept_in_reserve() const {
  return static_cast<int>(std::count_if(members_.begin(), members_.end(), [this](const Member& m) { return reserved(m); }));
}

const Member* Membership::member(int id) const {
  auto it = std::find_if(members_.begin(), members_.end(), [id](const Member& m) { return m.id == id; });
  return it == members_.end() ? nullptr : &*it;
}

std::vector<int> Membership::active_ids() const {
  std::vector<int> ids;
  for (const Member* m : active()) ids.push_back(m->id);
  return ids;
}

// The first generation's slots: requested ranks first (the master asks for 0), the others in
// join order into the lowest free slots; then contiguous (an elastic start below MAX).
MembershipChange Membership::start(std::string reason) {
  started_ = true;
  std::vector<Member*> starting;  // in join order
  std::vector<int> requested;
  for (auto& m : members_)
    if (m.role == MemberRole::Active) {
      starting.push_back(&m);
      requested.push_back(m.requested_slot);
    }
  const auto slots = rendezvous::assign_node_ranks(requested, static_cast<std::size_t>(settings_.max_nodes));
  for (std::size_t i = 0; i < starting.size(); ++i) starting[i]->slot = slots[i];
  renumber_active();  // a job started below its largest size: no gaps between the ranks
  return {MembershipChange::Kind::Start, std::move(reason), {}, {}};
}

int Membership::size() const {
  return static_cast<int>(std::count_if(members_.begin(), members_.end(), [](const Member& m) { return m.role == MemberRole::Active; }));
}

std::vector<const Member*> Membership::active() const {
  std::vector<const Member*> out;
  for (const auto& m : members_)
    if (m.role == MemberRole::Active) out.push_back(&m);
  std::sort(out.begin(), out.end(), [](const Member* a, const Member* b) { return a->slot < b->slot; });
  return out;
}

void Membership::renumber_active() {
  auto ordered = active();
  for (std::size_t i = 0; i < ordered.size(); ++i) find(ordered[i]->id)->slot = static_cast<int>(i);
}

MembershipChange Membership::counted(MembershipChange change) {
  if (change.kind != MembershipChange::Kind::Replace && change.kind != MembershipChange::Kind::Resize) return change;
  if (++changes_ <= settings_.max_changes) return change;
  return {MembershipChange::Kind::Fail,
          fmt::format("{} — and that is membership change {} of at most {} (membership.max_changes): a node keeps "
                      "failing or flapping; fix it or raise the limit",
                      change.reason, changes_, settings_.max_changes),
          {}, change.excluded};
}

MembershipChange Membership::on_join(int id, const std::string& host, PolicyClock::time_point now, std::string* refusal,
                                     int requested_slot) {
  for (const auto& [banned, until] : cooldowns_)
    if (banned == host && now < until) {
      if (refusal)
        *refusal = fmt::format("host {} was excluded from this job; it may join again in {:.0f} s "
                               "(membership.exclude_cooldown_s)", host, seconds(until - now));
      return {};
    }
  const int spares = static_cast<int>(std::count_if(members_.begin(), members_.end(), [](const Member& m) { return m.role == MemberRole::Spare; }));
  const bool elastic = settings_.min_nodes < settings_.max_nodes;
  // The master's launcher (placed at 0) always takes its place: MASTER_ADDR is its host.
  // Nor a launcher on a host that already has a node: keeping it back would not keep the host out.
  const bool keep_in_reserve = !started_ && spares < settings_.spares && requested_slot != 0 && reserve_host(host) &&
                               !host_has_node(host);
  // A launcher that asked to be a spare (--node-rank >= --nodes) while a host kept in reserve
  // holds a spare's place takes a node's place instead: the two swap roles.
  const bool asks_for_spare = requested_slot >= settings_.max_nodes && spares_kept_in_reserve() == 0;
  if (!started_ && size() < settings_.max_nodes && !asks_for_spare && !keep_in_reserve) {
    members_.push_back({id, host, MemberRole::Active, -1, requested_slot < settings_.max_nodes ? requested_slot : -1,
                        "joined", now, 0});
    if (size() == settings_.max_nodes) return start(fmt::format("all {} nodes joined", size()));
    if (size() >= settings_.min_nodes && !min_reached_at_) min_reached_at_ = now;
    return {};
  }
  // A running job (or a full one still starting): a spare, or the launcher that fills a gap.
  const int room = settings_.spares + (started_ && elastic ? settings_.max_nodes - size() : 0);
  if (spares >= room && !waiting_until_) {
    if (refusal)
      *refusal = fmt::format("the job has its {} nodes and {} spare(s) already; start this launcher with a larger "
                             "--spares on every node to keep more spares", size(), settings_.spares);
    return {};
  }
  members_.push_back({id, host, MemberRole::Spare, -1, -1,
                      keep_in_reserve ? "kept in reserve: its host caused trouble in past runs"
                                      : started_ ? "joined the running job" : "joined as a spare",
                      now, 0});
  if (!started_) return {};
  if (waiting_until_) {  // a gap to fill: the lowest free slot (fixed size) or one more node (elastic)
    Member* m = find(id);
    std::vector<int> taken;
    for (const auto* a : active()) taken.push_back(a->slot);
    int slot = 0;
    while (std::find(taken.begin(), taken.end(), slot) != taken.end()) ++slot;
    m->role = MemberRole::Active;
    m->slot = slot;
    m->reason = "joined to fill a gap";
    if (size() >= settings_.min_nodes && (elastic || size() == settings_.max_nodes)) waiting_until_.reset();
    return counted({elastic ? MembershipChange::Kind::Resize : MembershipChange::Kind::Replace,
                    fmt::format("{} joined and takes node rank {}", host, slot), {}, {}});
  }
  return grow_candidate(now);
}

MembershipChange Membership::on_tick(PolicyClock::time_point now) {
  // Only the hosts kept in reserve are missing for the start: the last call waits for
  // another launcher, then they take part.
  const bool reserve_needed = !started_ && size() < settings_.min_nodes &&
                              size() + spares_kept_in_reserve() >= settings_.min_nodes;
  if (!reserve_needed) reserve_call_from_.reset();
  else if (!reserve_call_from_) reserve_call_from_ = now;
  else if (seconds(now - *reserve_call_from_) >= settings_.last_call_s) return start_without_more_launchers(now);
  if (!started_ && min_reached_at_ && seconds(now - *min_reached_at_) >= settings_.last_call_s)
    return start(fmt::format("{} of up to {} nodes joined and the last call ({:g} s) is over", size(),
                             settings_.max_nodes, settings_.last_call_s));
  if (waiting_until_ && now >= *waiting_until_) {
    waiting_until_.reset();
    return {MembershipChange::Kind::Fail,
            fmt::format("{} of the {} required node(s) remain and no launcher joined within {:g} s "
                        "(membership.below_min_wait_s): start a replacement (same command line) or keep spares "
                        "(--spares)",
                        size(), settings_.min_nodes, settings_.below_min_wait_s),
            {}, {}};
  }
  return {};
}

MembershipChange Membership::start_without_more_launchers(PolicyClock::time_point now) {
  std::vector<std::string> hosts;
  while (size() < settings_.min_nodes) {
    Member* m = oldest_spare();
    if (!m) break;
    m->role = MemberRole::Active;
    m->reason = "takes part: no other launcher came to keep it in reserve";
    m->since = now;
    hosts.push_back(m->host);
  }
  reserve_call_from_.reset();
  if (size() >= settings_.min_nodes && !min_reached_at_) min_reached_at_ = now;
  return start(fmt::format("{} node(s) joined; no other launcher came within the last call ({:g} s, "
                           "membership.last_call_s), so host(s) {} kept in reserve for trouble in past runs take part",
                           size(), settings_.last_call_s, fmt::join(hosts, ", ")));
}

MembershipChange Membership::refill(int slot, const std::string& what, PolicyClock::time_point now) {
  if (Member* spare = oldest_spare()) {
    spare->role = MemberRole::Active;
    spare->slot = slot;
    spare->reason = "promoted: replaced " + what;
    spare->since = now;
    return counted({MembershipChange::Kind::Replace,
                    fmt::format("{}; the spare on host {} takes node rank {} (world size unchanged)", what, spare->host, slot),
                    {}, {}});
  }
  const bool elastic = settings_.min_nodes < settings_.max_nodes;
  if (elastic && size() >= settings_.min_nodes) {
    renumber_active();
    return counted({MembershipChange::Kind::Resize,
                    fmt::format("{}; no spare: the job shrinks to {} node(s) (ranks renumbered)", what, size()), {}, {}});
  }
  if (settings_.below_min_wait_s <= 0)
    return {MembershipChange::Kind::Fail, fmt::format("{}; no spare to replace it (--spares)", what), {}, {}};
  waiting_until_ = after(now, settings_.below_min_wait_s);
  return {MembershipChange::Kind::Wait,
          fmt::format("{}; no spare: waiting up to {:g} s for a launcher to join (membership.below_min_wait_s)", what,
                      settings_.below_min_wait_s),
          *waiting_until_, {}};
}

MembershipChange Membership::on_lost(int id, const std::string& why, PolicyClock::time_point now) {
  Member* m = find(id);
  if (!m || m->role == MemberRole::Lost || m->role == MemberRole::Excluded) return {};
  const MemberRole was = m->role;
  const int slot = m->slot;
  const std::string what = was == MemberRole::Active ? fmt::format("{} was lost: {}", node_name(*m), why)
                                                     : fmt::format("spare on host {} was lost: {}", m->host, why);
  m->role = MemberRole::Lost;
  m->slot = -1;
  m->reason = why;
  m->since = now;
  if (was == MemberRole::Spare) return {};  // an idle spare changes nothing
  if (!started_) {  // slots are given at the start
    if (size() < settings_.min_nodes) min_reached_at_.reset();
    return {};
  }
  return refill(slot, what, now);
}

MembershipChange Membership::on_first_init_failure(int slot, const std::string& what, PolicyClock::time_point now) {
  Member* m = active_at(slot);
  if (!m) return {};
  if (++m->first_init_failures < settings_.exclude_after) return {};
  // Excluding helps only when the job can go on without the node; otherwise the init
  // restart budget decides, as without membership.
  const bool elastic = settings_.min_nodes < settings_.max_nodes;
  if (!oldest_spare() && !(elastic && size() - 1 >= settings_.min_nodes)) return {};
  return exclude(*m, fmt::format("{} excluded after {} init failures on its ranks: {}", node_name(*m),
                                  m->first_init_failures, what),
                 now);
}

MembershipChange Membership::on_straggler(int slot, const std::string& what, PolicyClock::time_point now) {
  Member* m = active_at(slot);
  if (!m || !oldest_spare()) return {};
  return exclude(*m, fmt::format("{} swapped out: {}", node_name(*m), what), now);
}

// An active node leaves the job for good (told to exit); a spare or the job's shrink takes its slot.
MembershipChange Membership::exclude(Member& m, const std::string& reason, PolicyClock::time_point now) {
  const int slot = m.slot;
  m.role = MemberRole::Excluded;
  m.slot = -1;
  m.reason = reason;
  m.since = now;
  if (settings_.exclude_cooldown_s > 0) cooldowns_.emplace_back(m.host, after(now, settings_.exclude_cooldown_s));
  MembershipChange change = refill(slot, reason, now);
  change.excluded.push_back(m.id);
  return change;
}

MembershipChange Membership::grow_candidate(PolicyClock::time_point now) {
  if (!started_ || size() >= settings_.max_nodes) return {};
  Member* spare = oldest_spare(false);  // a host kept in reserve waits for a slot to refill
  if (!spare) return {};
  const int slot = size();  // after the current active nodes
  spare->role = MemberRole::Active;
  spare->slot = slot;
  spare->reason = "joined: the job grows";
  spare->since = now;
  renumber_active();
  return counted({MembershipChange::Kind::Resize,
                  fmt::format("host {} joined: the job grows to {} node(s)", spare->host, size()), {}, {}});
}

std::string Membership::table(PolicyClock::time_point now) const {
  std::string out = fmt::format("{:<6} {:<20} {:<9} {:<5} {:<8} {}\n", "member", "host", "role", "node", "since", "reason");
  for (const auto& m : members_)
    out += fmt::format("{:<6} {:<20} {:<9} {:<5} {:<8} {}\n", m.id, m.host, member_role_name(m.role),
                       m.slot >= 0 ? std::to_string(m.slot) : "-", human_duration(seconds(now - m.since)) + " ago",
                       m.reason);
  return out;
}

}  // namespace ddplaunch
