// Job records: the text form, and which job a subcommand without --master means.
#include <gtest/gtest.h>

#include <unistd.h>

#include "job_record.h"

namespace ddplaunch {
namespace {

TEST(JobRecord, RoundTripsAndRefusesAnIncompleteRecord) {
  JobRecord r{"train-7", "10.0.0.1:29400", "secret-token", 4242};
  auto back = parse_job_record(format_job_record(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->job_id, "train-7");
  EXPECT_EQ(back->master, "10.0.0.1:29400");
  EXPECT_EQ(back->token, "secret-token");
  EXPECT_EQ(back->pid, 4242);
  EXPECT_FALSE(parse_job_record("job_id=x\npid=3\n"));  // no master
  EXPECT_FALSE(parse_job_record("job_id=x\nmaster=h:1\npid=-3\n"));
}

TEST(JobRecord, TheOnlyJobIsChosenSeveralAreListedAndAMissingOneIsNamed) {
  std::vector<JobRecord> none;
  auto missing = choose_job_record(none, "");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error.find("no ddplaunch job is running on this node"), std::string::npos) << missing.error;
  // Two launchers of one job on this machine (loopback nodes): the same job; the token wins.
  std::vector<JobRecord> one_job{{"a", "127.0.0.1:1", "", 10}, {"a", "127.0.0.1:1", "tok", 11}};
  auto chosen = choose_job_record(one_job, "");
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->token, "tok");
  std::vector<JobRecord> two{{"a", "127.0.0.1:1", "", 10}, {"b", "127.0.0.1:2", "", 12}};
  auto several = choose_job_record(two, "");
  ASSERT_FALSE(several);
  EXPECT_NE(several.error.find("--job a "), std::string::npos) << several.error;
  EXPECT_NE(several.error.find("--job b "), std::string::npos) << several.error;
  auto b = choose_job_record(two, "b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->master, "127.0.0.1:2");
  auto unknown = choose_job_record(two, "c");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error.find("no job 'c'"), std::string::npos) << unknown.error;
  // A refused record folder may hold the job: the answer says so instead of "none is running".
  auto refused = choose_job_record(none, "", {"refusing the job record folder /tmp/x: it is a symbolic link"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error.find("no ddplaunch job is running"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("not every record folder could be read"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("/tmp/x: it is a symbolic link"), std::string::npos) << refused.error;
}

// The launchers of one job on this node are one listing when a choice must be asked for.
TEST(JobRecord, SeveralJobsAreListedOnceEachWithTheirLaunchers) {
  std::vector<JobRecord> records{{"a", "127.0.0.1:1", "", 10}, {"b", "127.0.0.1:2", "", 12}, {"a", "127.0.0.1:1", "", 11}};
  auto several = choose_job_record(records, "");
  ASSERT_FALSE(several);
  EXPECT_NE(several.error.find("--job a   (master 127.0.0.1:1, launcher pids 10, 11)"), std::string::npos) << several.error;
  EXPECT_EQ(several.error.find("--job a ", several.error.find("--job a ") + 1), std::string::npos) << several.error;
  EXPECT_NE(several.error.find("--job b   (master 127.0.0.1:2, launcher pid 12)"), std::string::npos) << several.error;
}

// A record's launcher runs while its pid lives and is a ddplaunch: this test's own pid is
// another program (as a reused pid would be), a pid above any pid_max is no process.
TEST(JobRecord, OnlyALiveDdplaunchPidIsARunningLauncher) {
  EXPECT_FALSE(launcher_still_runs(static_cast<long>(::getpid())));
  EXPECT_FALSE(launcher_still_runs(2147480000L));
  EXPECT_FALSE(launcher_still_runs(0));
}

}  // namespace
}  // namespace ddplaunch
