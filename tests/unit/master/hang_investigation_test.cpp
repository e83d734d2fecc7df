// The master's hang watch through its seam: it reads a real JobPolicy (planned on two nodes
// of two ranks each), what it asks of its owner is recorded by its hooks, and its stack rounds'
// timers run on a local io_context. The test drives the rank reports and the sweep's clock.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "wire/launcher_messages.h"
#include "master/hang_investigation.h"
#include "policy_stories.h"
#include "two_node_settings.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;

struct FoundHang {
  Generation generation;
  int rank = -1;
  std::string detail;
};

// Suspect after 10 s without progress, hung after 30 s.
CoordinatorSettings short_deadlines() {
  CoordinatorSettings s = two_node_settings("hang-watch-test");
  s.config.hang.suspect_floor_s = 10;
  s.config.hang.hang_minimum_s = 30;
  return s;
}

// A watch of generation 0 on two nodes, started at `start`.
struct WatchedJob {
  explicit WatchedJob(CoordinatorSettings settings = short_deadlines())
      : policy(testing::settings()),
        timeline(policy, settings.config),
        watch(io, settings, HistorySeed{}, policy, timeline,
              {.ask_nodes = [this](long round) { asked.push_back(round); },
               .hang_found = [this](Generation g, int rank, const std::string& detail) { hangs.push_back({g, rank, detail}); }}) {
    policy.on_nodes_joined(Generation{0}, testing::nodes(2), PolicyClock::now());
    watch.start_generation(Generation{0}, 4, std::chrono::seconds(2));
    start = PolicyClock::now();
  }
  ~WatchedJob() { watch.close(); }

  // Ranks 0..3 report `steps`, their longest recent interval, and progress `age_s` ago, at `at`.
  void report(PolicyClock::duration at, std::vector<long> steps, long max_interval_ms, std::vector<int> age_s) {
    for (int node = 0; node < 2; ++node) {
      std::vector<RankReport> ranks;
      for (int local = 0; local < 2; ++local) {
        const int rank = node * 2 + local;
        RankReport r;
        r.rank = rank;
        r.phase = RankPhase::Running;
        r.state = "running";
        r.steps = steps[static_cast<std::size_t>(rank)];
        r.max_interval_ms = max_interval_ms;
        r.progress_age_ms = age_s[static_cast<std::size_t>(rank)] * 1000L;
        ranks.push_back(r);
      }
      watch.on_ranks_reported(Generation{0}, ranks, start + at);
    }
  }

  // Both nodes answer round `round`; rank 3 is in the data loader, the others in all_reduce.
  void answer_round(long round) {
    for (int node = 0; node < 2; ++node) {
      messages::RankStacksReply reply{round, "host" + std::to_string(node), {}};
      for (int local = 0; local < 2; ++local) {
        const int rank = node * 2 + local;
        reply.stacks.push_back(RankStack{rank, node, "", 100 + rank, "python",
                                         rank == 3 ? "next_batch ← main() at train.py:30"
                                                   : "all_reduce ← train_step ← main() at train.py:12"});
      }
      watch.on_rank_stacks(node, messages::encode(Generation{0}, reply));
    }
  }

  boost::asio::io_context io;
  JobPolicy policy;
  MasterTimeline timeline;
  std::vector<long> asked;
  std::vector<FoundHang> hangs;
  HangInvestigation watch;
  PolicyClock::time_point start;
};

TEST(HangInvestigation, ASilentRankGetsAStackRoundThenAHangForThePolicyOnceItsStacksAreIn) {
  WatchedJob job;
  job.report(1s, {50, 50, 50, 50}, 1000, {0, 0, 0, 0});
  job.watch.check(job.start + 5s);
  EXPECT_TRUE(job.asked.empty()) << "no rank is silent yet";

  // Rank 3 stopped at 1 s; the others go on.
  job.report(20s, {70, 70, 70, 50}, 1000, {0, 0, 0, 19});
  job.watch.check(job.start + 20s);
  ASSERT_EQ(job.asked.size(), 1u) << "past the suspect floor: a stack round";
  job.answer_round(job.asked[0]);
  EXPECT_TRUE(job.hangs.empty()) << "a suspect is reported, never acted on";
  EXPECT_NE(job.timeline.json().find("stack round"), std::string::npos);

  job.report(40s, {90, 90, 90, 50}, 1000, {0, 0, 0, 39});
  job.watch.check(job.start + 40s);
  ASSERT_EQ(job.asked.size(), 2u) << "past the hang deadline: another round";
  EXPECT_TRUE(job.hangs.empty()) << "the policy hears of the hang with the round's stacks";
  job.answer_round(job.asked[1]);
  ASSERT_EQ(job.hangs.size(), 1u);
  EXPECT_EQ(job.hangs[0].generation, Generation{0});
  EXPECT_EQ(job.hangs[0].rank, 3);
  EXPECT_NE(job.hangs[0].detail.find("rank 3"), std::string::npos) << job.hangs[0].detail;
  EXPECT_NE(job.hangs[0].detail.find("train.py:30"), std::string::npos) << job.hangs[0].detail;
}

// etcd: the step interval learnt goes with every save of the policy's state; a save of its own
// only when it grew by more than a tenth since the value last carried.
TEST(HangInvestigation, TheLearntStepIntervalIsSavedOnlyWhenItGrewEnough) {
  CoordinatorSettings s = short_deadlines();
  std::vector<double> saved;  // the learnt step interval of each state saved
  s.save_state = [&](std::string state, std::function<void()>) {
    saved.push_back(nlohmann::json::parse(state)["learnt_step_interval_s"].get<double>());
  };
  WatchedJob job(s);
  job.watch.save_learnt_step_interval();
  EXPECT_TRUE(saved.empty()) << "nothing learnt yet";

  job.report(2s, {10, 10, 10, 10}, 1000, {0, 0, 0, 0});
  job.watch.save_learnt_step_interval();
  EXPECT_EQ(saved, std::vector<double>{1.0}) << "anything above none is worth a save";

  job.report(3s, {11, 11, 11, 11}, 1050, {0, 0, 0, 0});
  job.watch.save_learnt_step_interval();
  EXPECT_EQ(saved.size(), 1u) << "5% more is not worth a save of its own";
  EXPECT_EQ(job.watch.carried_state().learnt_step_interval_s, 1.05) << "it goes with the next decision's save";

  job.report(4s, {12, 12, 12, 12}, 1110, {0, 0, 0, 0});
  job.watch.save_learnt_step_interval();
  EXPECT_EQ(saved.size(), 1u) << "the small increase carried since moved the threshold with it";

  job.report(5s, {13, 13, 13, 13}, 2000, {0, 0, 0, 0});
  job.watch.save_learnt_step_interval();
  EXPECT_EQ(saved, (std::vector<double>{1.0, 2.0}));
}

// A coordinator that takes over carries the last one's interval on, even before it learns one.
TEST(HangInvestigation, AnIntervalCarriedFromTheLastCoordinatorIsNeverSavedLower) {
  WatchedJob job;
  job.watch.seed_from_state(CarriedState{3.0});
  EXPECT_EQ(job.watch.carried_state().learnt_step_interval_s, 3.0);
  job.report(2s, {10, 10, 10, 10}, 1000, {0, 0, 0, 0});
  EXPECT_EQ(job.watch.carried_state().learnt_step_interval_s, 3.0);
}

TEST(HangInvestigation, StacksQueriesStartJoinAndRefuseRounds) {
  CoordinatorSettings s = short_deadlines();
  s.config.token = "hang-watch-test-token";  // a multi-node job answers `stacks` only with one
  WatchedJob job(s);
  const std::string pending = job.watch.answer_stacks_query({});
  ASSERT_EQ(job.asked.size(), 1u);
  EXPECT_EQ(pending, encode_stacks_reply({StacksReply::Kind::Pending, job.asked[0], {}}));
  EXPECT_EQ(job.watch.answer_stacks_query({}), pending) << "a second query joins the round in flight";
  EXPECT_EQ(job.asked.size(), 1u);
  EXPECT_EQ(job.watch.answer_stacks_query({job.asked[0]}), pending);
  job.answer_round(job.asked[0]);
  const StacksReply done = decode_stacks_reply(job.watch.answer_stacks_query({job.asked[0]}));
  EXPECT_EQ(done.kind, StacksReply::Kind::Done);
  EXPECT_NE(done.text.find("train.py:12"), std::string::npos) << done.text;
  const StacksReply unknown = decode_stacks_reply(job.watch.answer_stacks_query({99}));
  EXPECT_EQ(unknown.kind, StacksReply::Kind::Error);
  EXPECT_NE(unknown.text.find("no stack round 99"), std::string::npos) << unknown.text;
}

TEST(HangInvestigation, AMultiNodeJobWithoutATokenRefusesStacks) {
  WatchedJob job;
  const StacksReply refused = decode_stacks_reply(job.watch.answer_stacks_query({}));
  EXPECT_EQ(refused.kind, StacksReply::Kind::Error);
  EXPECT_TRUE(job.asked.empty());
}

TEST(HangInvestigation, StatusSaysTheDeadlinesOnlyOnceTheJobIsPlanned) {
  boost::asio::io_context io;
  CoordinatorSettings s = short_deadlines();
  JobPolicy joining(testing::settings());
  MasterTimeline timeline(joining, s.config);
  HangInvestigation watch(io, s, HistorySeed{}, joining, timeline, {});
  EXPECT_EQ(watch.status_text(), "");
  const StacksReply refused = decode_stacks_reply(watch.answer_stacks_query({}));
  EXPECT_NE(refused.text.find("no workers to take stacks from"), std::string::npos) << refused.text;
  joining.on_nodes_joined(Generation{0}, testing::nodes(2), PolicyClock::now());
  EXPECT_NE(watch.status_text().find("hang deadlines: "), std::string::npos) << watch.status_text();
}

}  // namespace
}  // namespace ddplaunch
