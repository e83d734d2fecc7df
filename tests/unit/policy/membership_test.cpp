// Membership: spares promoted into the lost slot, elastic MIN:MAX start/shrink/grow, the
// below-MIN wait, bad-node exclusion with cooldown, rejoin, the flap bound, hosts kept in
// reserve for their past trouble, and a straggler's node swapped for a spare. Pure.
#include <gtest/gtest.h>

#include "policy/membership.h"

namespace {

using namespace ddplaunch;
using namespace std::chrono_literals;
using Kind = MembershipChange::Kind;
const PolicyClock::time_point t0 = PolicyClock::time_point{} + 1000s;

MembershipSettings fixed(int nodes, int spares) {
  MembershipSettings s;
  s.min_nodes = s.max_nodes = nodes;
  s.spares = spares;
  return s;
}

TEST(Membership, FixedJobStartsWhenAllJoinedAndSparesWaitIdle) {
  Membership m(fixed(2, 1));
  EXPECT_EQ(m.on_join(1, "a", t0, nullptr).kind, Kind::None);
  EXPECT_EQ(m.on_join(2, "b", t0, nullptr).kind, Kind::Start);
  EXPECT_EQ(m.on_join(3, "c", t0, nullptr).kind, Kind::None);  // spare
  std::string refusal;
  EXPECT_EQ(m.on_join(4, "d", t0, &refusal).kind, Kind::None);
  EXPECT_NE(refusal.find("2 nodes and 1 spare(s) already"), std::string::npos) << refusal;
  EXPECT_EQ(m.size(), 2);
  EXPECT_NE(m.table(t0 + 5s).find("spare"), std::string::npos);
}

TEST(Membership, ALostActiveNodeIsReplacedBySpareInItsSlotWorldUnchanged) {
  Membership m(fixed(3, 1));
  for (int id = 1; id <= 4; ++id) m.on_join(id, "h" + std::to_string(id), t0 + std::chrono::seconds(id), nullptr);
  auto change = m.on_lost(2, "heartbeat timeout (5 s)", t0 + 60s);
  EXPECT_EQ(change.kind, Kind::Replace);
  EXPECT_EQ(change.reason,
            "node 1 (host h2) was lost: heartbeat timeout (5 s); the spare on host h4 takes node rank 1 (world size unchanged)");
  auto active = m.active();
  ASSERT_EQ(active.size(), 3u);
  EXPECT_EQ(active[1]->host, "h4");
  EXPECT_EQ(active[2]->host, "h3");  // the others keep their ranks
}

TEST(Membership, ASpareLostWhileIdleChangesNothing) {
  Membership m(fixed(2, 1));
  m.on_join(1, "a", t0, nullptr);
  m.on_join(2, "b", t0, nullptr);
  m.on_join(3, "c", t0, nullptr);
  EXPECT_EQ(m.on_lost(3, "connection closed", t0 + 1s).kind, Kind::None);
  EXPECT_EQ(m.size(), 2);
}

TEST(Membership, WithoutASpareAFixedJobFailsOrWaitsForARejoinedLauncher) {
  auto no_wait = fixed(2, 0);
  no_wait.below_min_wait_s = 0;
  Membership m(no_wait);
  m.on_join(1, "a", t0, nullptr);
  m.on_join(2, "b", t0, nullptr);
  auto failed = m.on_lost(2, "killed", t0 + 1s);
  EXPECT_EQ(failed.kind, Kind::Fail);
  EXPECT_NE(failed.reason.find("no spare to replace it (--spares)"), std::string::npos) << failed.reason;

  auto waiting = fixed(2, 0);
  waiting.below_min_wait_s = 60;
  Membership w(waiting);
  w.on_join(1, "a", t0, nullptr);
  w.on_join(2, "b", t0, nullptr);
  auto wait = w.on_lost(2, "killed", t0 + 1s);
  EXPECT_EQ(wait.kind, Kind::Wait);
  // The restarted launcher (a new connection, same host) rejoins into the free slot.
  auto back = w.on_join(3, "b", t0 + 10s, nullptr);
  EXPECT_EQ(back.kind, Kind::Replace);
  EXPECT_EQ(back.reason, "b joined and takes node rank 1");
  EXPECT_EQ(w.on_tick(t0 + 120s).kind, Kind::None);  // the wait is over: nothing fails

  Membership late(waiting);
  late.on_join(1, "a", t0, nullptr);
  late.on_join(2, "b", t0, nullptr);
  late.on_lost(2, "killed", t0 + 1s);
  auto gave_up = late.on_tick(t0 + 62s);
  EXPECT_EQ(gave_up.kind, Kind::Fail);
  EXPECT_NE(gave_up.reason.find("1 of the 2 required node(s) remain"), std::string::npos) << gave_up.reason;
}

TEST(Membership, ElasticStartsAtMaxOrAtMinAfterTheLastCallThenShrinksAndGrows) {
  MembershipSettings s;
  s.min_nodes = 2;
  s.max_nodes = 3;
  s.last_call_s = 10;
  Membership m(s);
  m.on_join(1, "a", t0, nullptr);
  EXPECT_EQ(m.on_join(2, "b", t0 + 1s, nullptr).kind, Kind::None);
  EXPECT_EQ(m.on_tick(t0 + 10s).kind, Kind::None);
  auto start = m.on_tick(t0 + 11s);
  EXPECT_EQ(start.kind, Kind::Start);
  EXPECT_EQ(m.size(), 2);
  auto grow = m.on_join(3, "c", t0 + 20s, nullptr);  // joins a running job below MAX: grows
  EXPECT_EQ(grow.kind, Kind::Resize);
  EXPECT_EQ(m.size(), 3);
  auto shrink = m.on_lost(1, "killed", t0 + 30s);  // node 0's replacement is not needed: shrink
  EXPECT_EQ(shrink.kind, Kind::Resize);
  auto active = m.active();
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0]->slot, 0);  // contiguous again
  EXPECT_EQ(active[1]->slot, 1);
  EXPECT_EQ(active[0]->host, "b");
}

TEST(Membership, ANodeWhoseRanksFailInitFirstTwiceIsExcludedAndReplacedThenCooledDown) {
  auto s = fixed(2, 1);
  s.exclude_cooldown_s = 600;
  Membership m(s);
  m.on_join(1, "gpu16", t0, nullptr);
  m.on_join(2, "gpu17", t0, nullptr);
  m.on_join(3, "gpu18", t0, nullptr);
  EXPECT_EQ(m.on_first_init_failure(1, "NCCL error: unhandled system error", t0 + 5s).kind, Kind::None);
  auto excluded = m.on_first_init_failure(1, "NCCL error: unhandled system error", t0 + 10s);
  EXPECT_EQ(excluded.kind, Kind::Replace);
  EXPECT_EQ(excluded.excluded, std::vector<int>{2});
  EXPECT_NE(excluded.reason.find("node 1 (host gpu17) excluded after 2 init failures on its ranks: NCCL error"),
            std::string::npos)
      << excluded.reason;
  std::string refusal;
  m.on_join(4, "gpu17", t0 + 60s, &refusal);
  EXPECT_NE(refusal.find("host gpu17 was excluded from this job; it may join again in 550 s"), std::string::npos)
      << refusal;
}

TEST(Membership, NoExclusionWhenNothingCouldReplaceTheNode) {
  Membership m(fixed(2, 0));
  m.on_join(1, "a", t0, nullptr);
  m.on_join(2, "b", t0, nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(m.on_first_init_failure(1, "x", t0).kind, Kind::None);
  EXPECT_EQ(m.size(), 2);
}

TEST(Membership, AFlappingNodeCannotLoopTheJobForever) {
  auto s = fixed(2, 1);
  s.max_changes = 3;
  Membership m(s);
  m.on_join(1, "a", t0, nullptr);
  m.on_join(2, "b", t0, nullptr);
  int id = 3;
  m.on_join(id, "spare", t0, nullptr);
  Kind last = Kind::None;
  for (int round = 0; round < 4; ++round) {
    last = m.on_lost(m.active()[1]->id, "flapped", t0 + std::chrono::seconds(round + 1)).kind;
    m.on_join(++id, "spare", t0 + std::chrono::seconds(round + 1), nullptr);
  }
  EXPECT_EQ(last, Kind::Fail);
}

TEST(Membership, AHostTroubledInPastRunsIsKeptAsTheSpareWhenAnotherLauncherCame) {
  auto s = fixed(2, 1);
  s.reserve_hosts = {"lemon"};
  Membership m(s);
  EXPECT_EQ(m.on_join(1, "a", t0, nullptr, 0).kind, Kind::None);     // the master's, placed at 0
  EXPECT_EQ(m.on_join(2, "lemon", t0 + 1s, nullptr).kind, Kind::None);  // first, but kept in reserve
  EXPECT_EQ(m.member(2)->role, MemberRole::Spare);
  EXPECT_EQ(m.member(2)->reason, "kept in reserve: its host caused trouble in past runs");
  EXPECT_EQ(m.on_join(3, "c", t0 + 2s, nullptr).kind, Kind::Start);
  auto active = m.active();
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0]->host, "a");
  EXPECT_EQ(active[1]->host, "c");
}

TEST(Membership, ALauncherThatAskedToBeASpareTakesTheNodePlaceTheReservedHostLeft) {
  auto s = fixed(2, 1);
  s.reserve_hosts = {"lemon"};
  Membership m(s);
  m.on_join(1, "a", t0, nullptr, 0);
  m.on_join(2, "lemon", t0 + 1s, nullptr, 1);  // --node-rank 1, kept in reserve all the same
  std::string refusal;
  EXPECT_EQ(m.on_join(3, "c", t0 + 2s, &refusal, 2).kind, Kind::Start) << refusal;  // --node-rank 2: a spare
  EXPECT_EQ(m.member(3)->slot, 1);
  EXPECT_EQ(m.member(2)->role, MemberRole::Spare);
  // The master's own launcher is never kept in reserve: MASTER_ADDR is its host. Nor is
  // another launcher on a host that takes part already (one machine's loopback job).
  Membership master_lemon(s);
  master_lemon.on_join(1, "lemon", t0, nullptr, 0);
  EXPECT_EQ(master_lemon.member(1)->role, MemberRole::Active);
  EXPECT_EQ(master_lemon.on_join(2, "lemon", t0, nullptr, 1).kind, Kind::Start);
  EXPECT_EQ(master_lemon.member(2)->role, MemberRole::Active);
}

TEST(Membership, AReservedHostTakesPartWhenNoOtherLauncherCameWithinTheLastCall) {
  auto s = fixed(2, 1);
  s.reserve_hosts = {"lemon"};
  s.last_call_s = 10;
  Membership m(s);
  m.on_join(1, "a", t0, nullptr, 0);
  m.on_join(2, "lemon", t0, nullptr);
  EXPECT_EQ(m.on_tick(t0 + 1s).kind, Kind::None);  // the last call starts now
  EXPECT_EQ(m.on_tick(t0 + 10s).kind, Kind::None);
  auto start = m.on_tick(t0 + 11s);
  ASSERT_EQ(start.kind, Kind::Start);
  EXPECT_NE(start.reason.find("no other launcher came within the last call (10 s, membership.last_call_s), so "
                              "host(s) lemon kept in reserve for trouble in past runs take part"),
            std::string::npos)
      << start.reason;
  EXPECT_EQ(m.size(), 2);
  EXPECT_EQ(m.member(2)->role, MemberRole::Active);
}

TEST(Membership, ReservedHostsAreLastToRefillASlotAndNeverGrowAnElasticJob) {
  auto s = fixed(2, 2);
  s.reserve_hosts = {"lemon"};
  Membership m(s);
  m.on_join(1, "lemon", t0, nullptr);      // reserve (oldest spare)
  m.on_join(2, "a", t0 + 1s, nullptr, 0);
  m.on_join(3, "b", t0 + 2s, nullptr);     // start
  m.on_join(4, "spare", t0 + 3s, nullptr);
  auto replaced = m.on_lost(3, "killed", t0 + 4s);
  EXPECT_EQ(replaced.kind, Kind::Replace);
  EXPECT_NE(replaced.reason.find("the spare on host spare takes node rank 1"), std::string::npos) << replaced.reason;
  auto again = m.on_lost(4, "killed", t0 + 5s);  // only the reserved host is left: better than nothing
  EXPECT_NE(again.reason.find("the spare on host lemon takes node rank 1"), std::string::npos) << again.reason;

  MembershipSettings elastic = fixed(3, 1);
  elastic.min_nodes = 1;
  elastic.reserve_hosts = {"lemon"};
  Membership grow(elastic);
  grow.on_join(1, "a", t0, nullptr, 0);
  grow.on_join(2, "lemon", t0, nullptr);
  EXPECT_EQ(grow.on_tick(t0 + 31s).kind, Kind::Start);
  EXPECT_EQ(grow.size(), 1);
  EXPECT_EQ(grow.grow_candidate(t0 + 32s).kind, Kind::None);
}

TEST(Membership, APersistentStragglersNodeIsSwappedForASpareOnlyWhenThereIsOne) {
  auto s = fixed(2, 1);
  s.exclude_cooldown_s = 60;
  Membership m(s);
  m.on_join(1, "a", t0, nullptr, 0);
  m.on_join(2, "slow", t0, nullptr);
  EXPECT_EQ(m.on_straggler(1, "rank 1 held the job back", t0 + 1s).kind, Kind::None);  // no spare yet
  EXPECT_EQ(m.member(2)->role, MemberRole::Active);
  m.on_join(3, "fresh", t0 + 2s, nullptr);
  auto swap = m.on_straggler(1, "rank 1 held the job back", t0 + 3s);
  EXPECT_EQ(swap.kind, Kind::Replace);
  EXPECT_EQ(swap.excluded, std::vector<int>{2});
  EXPECT_EQ(swap.reason,
            "node 1 (host slow) swapped out: rank 1 held the job back; the spare on host fresh takes node rank 1 "
            "(world size unchanged)");
  EXPECT_EQ(m.member(3)->slot, 1);
  std::string refusal;
  m.on_join(4, "slow", t0 + 4s, &refusal);
  EXPECT_NE(refusal.find("host slow was excluded from this job"), std::string::npos) << refusal;
  EXPECT_EQ(m.on_straggler(7, "no such node", t0 + 5s).kind, Kind::None);
}

}  // namespace
