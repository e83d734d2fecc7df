// SeatRules: the etcd seat's rules for keeping, renewing and losing its place, driven by short
// event scripts with the time passed in (no etcd, no clock): a lost lease, a stall, a win
// before and after one, being superseded while re-electing, a fenced write that finds another
// leader key, and a generation start that etcd never confirms.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <variant>

#include "policy/seat_rules.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
using Win = SeatRules::Win;
using Write = SeatRules::Write;

const PolicyClock::time_point t0{};

SeatRules rules() { return SeatRules(5s, 30s); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A stall: etcd stops answering, and the lease expires meanwhile.
SeatRules::RegisterAgain stall_then_lease_expires(SeatRules& r, bool leading) {
  r.on_reachability(false, "deadline exceeded", t0);
  auto verdict = r.on_lease_lost("lease not found", leading);
  EXPECT_TRUE(std::holds_alternative<SeatRules::RegisterAgain>(verdict));
  return std::get<SeatRules::RegisterAgain>(verdict);
}

// ---- the lease ----------------------------------------------------------------------------

TEST(SeatRules, ALeaseLostWhileEtcdAnsweredLosesTheSeat) {
  SeatRules r = rules();
  r.on_registered();
  auto verdict = r.on_lease_lost("lease not found", true);
  ASSERT_TRUE(std::holds_alternative<SeatRules::Lose>(verdict));
  EXPECT_EQ(std::get<SeatRules::Lose>(verdict).why, "this launcher's etcd lease is lost (lease not found)");
}

TEST(SeatRules, ALeaseLostInEtcdsStallRegistersAgainTheCoordinatorToBeElectedAgain) {
  SeatRules leader = rules();
  EXPECT_TRUE(stall_then_lease_expires(leader, true).re_electing);
  EXPECT_TRUE(leader.re_electing());
  SeatRules follower = rules();
  EXPECT_FALSE(stall_then_lease_expires(follower, false).re_electing);
  EXPECT_FALSE(follower.re_electing());
}

TEST(SeatRules, EtcdAnsweringAgainDoesNotUndoTheStallOfTheCurrentLease) {
  SeatRules r = rules();
  EXPECT_TRUE(contains(r.on_reachability(false, "connection refused", t0), "etcd is unreachable (connection refused)"));
  EXPECT_EQ(r.on_reachability(true, "", t0 + 1s), "etcd answers again");
  // The lease may still expire for the stall: renewed, not lost.
  EXPECT_TRUE(std::holds_alternative<SeatRules::RegisterAgain>(r.on_lease_lost("lease not found", false)));
  // A new lease starts clean: losing it now is the end.
  r.on_registered();
  EXPECT_TRUE(std::holds_alternative<SeatRules::Lose>(r.on_lease_lost("lease not found", false)));
}

TEST(SeatRules, RegisteringAgainThatFailsLosesTheSeat) {
  EXPECT_EQ(rules().on_register_again_failed("etcd: timed out").why,
            "cannot register again in etcd after its stall: etcd: timed out");
}

// ---- the election -------------------------------------------------------------------------

TEST(SeatRules, AWinTakesTheSeat) {
  SeatRules r = rules();
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::TakeSeat);
}

TEST(SeatRules, AWinOfAnEarlierLeaseOrWhileLeadingOrStoppedIsStale) {
  SeatRules r = rules();
  const int before = r.campaign_round();
  stall_then_lease_expires(r, false);
  EXPECT_EQ(r.on_campaign_won(before, false), Win::Stale) << "a campaign of the expired lease";
  EXPECT_FALSE(r.on_campaign_failed(before, false)) << "and not tried again";
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), true), Win::Stale) << "leading already";
  EXPECT_TRUE(r.on_campaign_failed(r.campaign_round(), false));
  EXPECT_TRUE(r.on_stop());
  EXPECT_FALSE(r.on_stop()) << "stops once";
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::Stale);
  EXPECT_FALSE(r.on_campaign_failed(r.campaign_round(), false));
}

TEST(SeatRules, AWinRightAfterAStallWaitsForTheLeaseToProveAlive) {
  SeatRules r = rules();
  r.on_reachability(false, "deadline exceeded", t0);
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::ConfirmLeaseFirst);
  EXPECT_EQ(r.on_lease_checked_after_win(r.campaign_round(), false, false), Win::LeaseExpired);
  EXPECT_EQ(r.on_lease_checked_after_win(r.campaign_round(), false, true), Win::TakeSeat);
  // The lease outlived the stall: the next win needs no check.
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::TakeSeat);
}

TEST(SeatRules, TheSittingCoordinatorElectedAgainAfterAStallGoesOnAsItself) {
  SeatRules r = rules();
  r.on_published("10.0.0.1:29400");
  stall_then_lease_expires(r, true);
  EXPECT_TRUE(r.keeps_state(false)) << "what is decided meanwhile waits for the new key";
  r.on_registered();
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::TakeSeatAgain);
  EXPECT_FALSE(r.re_electing());
  EXPECT_EQ(r.published_address(), "10.0.0.1:29400") << "published again as it was";
}

TEST(SeatRules, AWinAgainRightAfterTheNextStallStillChecksTheLease) {
  SeatRules r = rules();
  stall_then_lease_expires(r, true);
  r.on_registered();
  r.on_reachability(false, "deadline exceeded", t0 + 10s);  // the new lease stalls too
  EXPECT_EQ(r.on_campaign_won(r.campaign_round(), false), Win::ConfirmLeaseFirst);
  EXPECT_EQ(r.on_lease_checked_after_win(r.campaign_round(), false, true), Win::TakeSeatAgain);
}

// ---- following, and being superseded ------------------------------------------------------

TEST(SeatRules, ACoordinatorIsFollowedOnceAndNeverAnOlderOne) {
  SeatRules r = rules();
  auto first = r.on_leader_seen("10.0.0.2:29400", 7);
  ASSERT_TRUE(std::holds_alternative<SeatRules::Follow>(first));
  EXPECT_EQ(std::get<SeatRules::Follow>(first).revision, 7);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.on_leader_seen("10.0.0.2:29400", 7))) << "the same again";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.on_leader_seen("10.0.0.3:29400", 5))) << "an older revision";
  EXPECT_TRUE(std::holds_alternative<SeatRules::Follow>(r.on_leader_seen("10.0.0.3:29400", 7))) << "a new address";
  EXPECT_TRUE(std::holds_alternative<SeatRules::Follow>(r.on_leader_seen("10.0.0.3:29400", 9)));
  EXPECT_EQ(r.followed_address(), "10.0.0.3:29400");
}

TEST(SeatRules, AnotherCoordinatorElectedWhileReElectingSupersedesThisOne) {
  SeatRules r = rules();
  r.on_published("10.0.0.1:29400");
  stall_then_lease_expires(r, true);
  EXPECT_TRUE(std::holds_alternative<SeatRules::Follow>(r.on_leader_seen("10.0.0.1:29400", 12)))
      << "its own address: itself, elected again";
  auto other = r.on_leader_seen("10.0.0.2:29400", 13);
  ASSERT_TRUE(std::holds_alternative<SeatRules::Lose>(other));
  EXPECT_TRUE(contains(std::get<SeatRules::Lose>(other).why,
                       "another launcher was elected coordinator (at 10.0.0.2:29400) while this one's lease had "
                       "expired in etcd's stall"))
      << std::get<SeatRules::Lose>(other).why;
}

TEST(SeatRules, ALeaderAddressIsQuotedPrintably) {
  SeatRules r = rules();
  r.on_published("a");
  stall_then_lease_expires(r, true);
  auto other = r.on_leader_seen("evil\x1b[2J", 3);
  ASSERT_TRUE(std::holds_alternative<SeatRules::Lose>(other));
  EXPECT_FALSE(contains(std::get<SeatRules::Lose>(other).why, "\x1b")) << std::get<SeatRules::Lose>(other).why;
}

// ---- fenced writes ------------------------------------------------------------------------

TEST(SeatRules, AWriteThatFindsAnotherLeaderKeyLosesTheSeat) {
  SeatRules r = rules();
  auto after = r.on_write_done(Write::AnotherLeaderKey);
  ASSERT_TRUE(std::holds_alternative<SeatRules::Lose>(after));
  EXPECT_TRUE(contains(std::get<SeatRules::Lose>(after).why, "another launcher leads the job now"));
}

TEST(SeatRules, AnUnansweredWriteIsTriedAgain) {
  SeatRules r = rules();
  auto after = r.on_write_done(Write::Unanswered);
  ASSERT_TRUE(std::holds_alternative<SeatRules::RetryWrite>(after));
  EXPECT_FALSE(std::get<SeatRules::RetryWrite>(after).check_lease);
  EXPECT_TRUE(std::holds_alternative<SeatRules::Written>(r.on_write_done(Write::Written)));
}

// Right after a stall the failed compare may come before the lease keeper's report: the lease
// decides. Alive: another launcher really leads.
TEST(SeatRules, AfterAStallAWriteThatFindsAnotherKeyAsksTheLease) {
  SeatRules r = rules();
  r.on_reachability(false, "deadline exceeded", t0);
  auto after = r.on_write_done(Write::AnotherLeaderKey);
  ASSERT_TRUE(std::holds_alternative<SeatRules::RetryWrite>(after));
  EXPECT_TRUE(std::get<SeatRules::RetryWrite>(after).check_lease);
  EXPECT_FALSE(r.on_lease_of_failed_write(false)) << "the lease went with the stall: the keeper reports it";
  auto lost = r.on_lease_of_failed_write(true);
  ASSERT_TRUE(lost);
  EXPECT_TRUE(contains(lost->why, "its lease is not")) << lost->why;
}

TEST(SeatRules, WhileReElectingAWriteWaitsForTheNewKeyWithoutAskingTheLease) {
  SeatRules r = rules();
  stall_then_lease_expires(r, true);
  auto after = r.on_write_done(Write::AnotherLeaderKey);
  ASSERT_TRUE(std::holds_alternative<SeatRules::RetryWrite>(after));
  EXPECT_FALSE(std::get<SeatRules::RetryWrite>(after).check_lease);
  EXPECT_FALSE(r.on_lease_of_failed_write(true));
}

TEST(SeatRules, StateIsKeptOnlyWhileLeadingOrReElecting) {
  SeatRules r = rules();
  EXPECT_FALSE(r.keeps_state(false));
  EXPECT_TRUE(r.keeps_state(true));
  EXPECT_TRUE(r.on_end_run(true));
  EXPECT_FALSE(r.keeps_state(true)) << "the run ended: nothing more is written";
  EXPECT_TRUE(std::holds_alternative<SeatRules::RemoveState>(r.on_write_done(Write::Written)))
      << "a write in flight at the end is followed by the removal";
}

TEST(SeatRules, TheEndOfARunNotLeadingStopsAtOnce) {
  SeatRules r = rules();
  EXPECT_FALSE(r.on_end_run(false));
  EXPECT_FALSE(r.ending());
}

// ---- the confirmation a generation start waits for ----------------------------------------

TEST(SeatRules, AGenerationStartUnconfirmedForTheBoundLosesTheSeatSayingHowLongEtcdWasSilent) {
  SeatRules r = rules();
  const auto deadline = r.on_confirmation_asked(t0 + 2s);
  ASSERT_TRUE(deadline);
  EXPECT_EQ(*deadline, t0 + 32s);
  EXPECT_FALSE(r.on_confirmation_asked(t0 + 10s)) << "the first ask's deadline stands";
  r.on_reachability(false, "deadline exceeded", t0 + 12s);  // silent since about a TTL before
  auto lost = r.on_confirm_deadline(t0 + 32s, "context deadline exceeded");
  ASSERT_TRUE(lost);
  EXPECT_TRUE(contains(lost->why, "etcd has not confirmed this coordinator's leadership for 30 s")) << lost->why;
  EXPECT_TRUE(contains(lost->why, "etcd has not answered its keepalives for about 25 s")) << lost->why;
  EXPECT_TRUE(contains(lost->why, "(last error: context deadline exceeded)")) << lost->why;
}

TEST(SeatRules, AConfirmedGenerationStartEndsTheWait) {
  SeatRules r = rules();
  ASSERT_TRUE(r.on_confirmation_asked(t0));
  r.on_all_confirmed();
  EXPECT_FALSE(r.on_confirm_deadline(t0 + 30s, "")) << "nothing waits any more";
  EXPECT_TRUE(r.on_confirmation_asked(t0 + 40s)) << "the next ask starts its own bound";
  auto lost = r.on_confirm_deadline(t0 + 70s, "");
  ASSERT_TRUE(lost);
  EXPECT_TRUE(contains(lost->why, "(last error: none)")) << lost->why;
  EXPECT_FALSE(contains(lost->why, "keepalives")) << "etcd answered its keepalives";
}

TEST(SeatRules, AStoppedSeatLosesNothingMore) {
  SeatRules r = rules();
  ASSERT_TRUE(r.on_confirmation_asked(t0));
  EXPECT_TRUE(r.on_stop());
  EXPECT_TRUE(r.stopped());
  EXPECT_FALSE(r.on_confirm_deadline(t0 + 30s, ""));
  EXPECT_FALSE(r.keeps_state(true));
  EXPECT_FALSE(r.on_end_run(true));
}

}  // namespace
}  // namespace ddplaunch
