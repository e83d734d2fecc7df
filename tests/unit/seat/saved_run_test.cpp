// The etcd state's envelope and the sealed coordinator address (agent/saved_run.h): a state is
// resumed only by a launcher of the run that wrote it, only when sealed with the job's token,
// and only under the key it was written for.
#include <gtest/gtest.h>

#include <string>

#include "seat/saved_run.h"

namespace ddplaunch {
namespace {

const std::string kKey = "/ddplaunch/job-a/state";
const std::string kPolicy = R"({"version":9,"phase":"Running","generation":3})";

std::string fresh_run() { return "fresh-run-nonce"; }

TEST(SavedRun, TheRunThatWroteAStateResumesIt) {
  const std::string value = seal_saved_run({"run-1", kPolicy}, "tok", kKey);
  TakeOver t = take_over_saved_run(value, "run-1", "tok", kKey, fresh_run);
  EXPECT_EQ(t.run, "run-1");
  ASSERT_TRUE(t.policy);
  EXPECT_EQ(*t.policy, kPolicy);
  EXPECT_TRUE(t.note.empty()) << t.note;
}

TEST(SavedRun, AnotherRunsStateIsLeftBehindAndTheJobStartsAfresh) {
  const std::string value = seal_saved_run({"run-1", kPolicy}, "", kKey);
  TakeOver later = take_over_saved_run(value, "", "", kKey, fresh_run);  // a new run, nobody joined yet
  EXPECT_EQ(later.run, "fresh-run-nonce");
  EXPECT_FALSE(later.policy);
  EXPECT_NE(later.note.find("the state of another run"), std::string::npos) << later.note;
  EXPECT_NE(later.note.find("Give each run its own --rdzv-id"), std::string::npos) << later.note;
  TakeOver other = take_over_saved_run(value, "run-2", "", kKey, fresh_run);
  EXPECT_EQ(other.run, "run-2");  // its own run goes on, afresh
  EXPECT_FALSE(other.policy);
}

TEST(SavedRun, NoStateIsTheRunsFirstCoordinator) {
  TakeOver first = take_over_saved_run(std::nullopt, "", "tok", kKey, fresh_run);
  EXPECT_EQ(first.run, "fresh-run-nonce");
  EXPECT_FALSE(first.policy);
  EXPECT_TRUE(first.note.empty());
  EXPECT_EQ(take_over_saved_run(std::nullopt, "run-1", "tok", kKey, fresh_run).run, "run-1");
}

// With a token, a state that cannot be opened (forged, or garbage) is never resumed. A launcher
// of the run (a failover) refuses to coordinate over it instead of restarting the job at
// generation 0 with full budgets; the first coordinator of a new run starts afresh, as ever.
TEST(SavedRun, AStateNotSealedWithTheTokenIsNotResumedAndAFailoverRefusesToCoordinate) {
  struct Case {
    const char* what;
    std::string value;
  };
  const Case cases[] = {
      {"no seal", seal_saved_run({"run-1", kPolicy}, "", kKey)},
      {"another token", seal_saved_run({"run-1", kPolicy}, "other", kKey)},
      {"another job's key", seal_saved_run({"run-1", kPolicy}, "tok", "/ddplaunch/job-b/state")},
      {"a bare policy document (an older version, or planted)", kPolicy},
      {"not JSON", "\x1b[2J garbage"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TakeOver failover = take_over_saved_run(c.value, "run-1", "tok", kKey, fresh_run);
    EXPECT_FALSE(failover.policy);
    EXPECT_NE(failover.refusal.find("this launcher does not coordinate and the job ends here"), std::string::npos)
        << failover.refusal;
    EXPECT_NE(failover.refusal.find(kKey), std::string::npos) << failover.refusal;
    TakeOver first = take_over_saved_run(c.value, "", "tok", kKey, fresh_run);
    EXPECT_FALSE(first.policy);
    EXPECT_TRUE(first.refusal.empty()) << first.refusal;
    EXPECT_EQ(first.run, "fresh-run-nonce");
    EXPECT_NE(first.note.find("does not resume"), std::string::npos) << first.note;
  }
  // Without a token a failover over garbage starts afresh, saying so (etcd's writers control
  // such a job anyway).
  TakeOver unsealed = take_over_saved_run(std::string("garbage"), "run-1", "", kKey, fresh_run);
  EXPECT_TRUE(unsealed.refusal.empty());
  EXPECT_NE(unsealed.note.find("starts afresh"), std::string::npos) << unsealed.note;
  // A seal's policy changed after sealing fails too.
  std::string altered = seal_saved_run({"run-1", kPolicy}, "tok", kKey);
  altered.replace(altered.find("Running"), 7, "Ended\\\"x");
  EXPECT_FALSE(take_over_saved_run(altered, "run-1", "tok", kKey, fresh_run).policy);
}

TEST(SavedRun, TheCoordinatorAddressIsFollowedOnlyWhenSealedForItsKey) {
  const std::string key = "/ddplaunch/job-a/coordinator/694d7e";
  const std::string sealed = seal_coordinator_address("10.0.0.5:29400", "tok", key);
  EXPECT_NE(sealed, "10.0.0.5:29400");
  EXPECT_EQ(open_coordinator_address(sealed, "tok", key), "10.0.0.5:29400");
  EXPECT_FALSE(open_coordinator_address(sealed, "other", key));
  EXPECT_FALSE(open_coordinator_address(sealed, "tok", "/ddplaunch/job-a/coordinator/1"));  // replayed elsewhere
  EXPECT_FALSE(open_coordinator_address("127.0.0.66:6666", "tok", key));                   // planted, unsealed
  EXPECT_FALSE(open_coordinator_address("127.0.0.66:6666" + sealed.substr(sealed.find('#')), "tok", key));
  // Without a token nothing is sealed (the launchers warn that etcd writers control the job).
  EXPECT_EQ(seal_coordinator_address("10.0.0.5:29400", "", key), "10.0.0.5:29400");
  EXPECT_EQ(open_coordinator_address("10.0.0.5:29400", "", key), "10.0.0.5:29400");
}

}  // namespace
}  // namespace ddplaunch
