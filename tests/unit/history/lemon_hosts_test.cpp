// Lemon hosts: the hosts that failed ranks or held a job back in at least 2 of the last 10
// runs, read back from the history file; hostile or garbled marks are nothing; what
// `ddplaunch doctor` says of them, of a history without any, and of one it cannot read.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "history/lemon_hosts.h"
#include "history/run_history.h"

namespace {

using namespace ddplaunch;

RunRecord run(long long at, std::vector<HostTrouble> troubled = {}) {
  RunRecord r{"0123456789abcdef", at, 4.0, 0.5};
  r.troubled_hosts = std::move(troubled);
  return r;
}

TEST(LemonHosts, AHostTroubledInTwoOfTheLastTenRunsIsNamedOthersAreNot) {
  std::vector<RunRecord> runs;
  runs.push_back(run(1, {{"h9", 1, 0}, {"h9", 0, 1}}));  // eleven runs back: out of the window
  runs.push_back(run(2, {{"h9", 1, 0}}));
  runs.push_back(run(3, {{"h3", 2, 0}, {"h5", 1, 0}}));
  for (int i = 4; i < 10; ++i) runs.push_back(run(i));
  runs.push_back(run(10, {{"h3", 0, 1}}));
  runs.push_back(run(11, {{"h5", 0, 0}}));  // listed without trouble: nothing
  const auto lemons = lemon_hosts(runs);
  ASSERT_EQ(lemons.size(), 1u);
  EXPECT_EQ(lemons[0].host, "h3");
  EXPECT_EQ(lemons[0].runs_failed, 1);
  EXPECT_EQ(lemons[0].runs_slow, 1);
  EXPECT_EQ(lemons[0].runs_troubled, 2);
  EXPECT_EQ(lemons[0].runs_considered, 10);
  EXPECT_EQ(lemons[0].last_trouble_unix, 10);
  EXPECT_EQ(lemon_host_line(lemons[0]),
            "host h3 failed ranks in 1 and was a straggler in 1 of the last 10 runs (last on 1970-01-01 00:00 UTC)");
  EXPECT_TRUE(lemon_hosts({}).empty());
}

TEST(LemonHosts, TheWorstComeFirst) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(run(i, {{"a", 1, 0}}));
  for (int i = 3; i < 6; ++i) runs.push_back(run(i, {{"b", 1, 0}, {"c", 0, 1}}));
  runs.push_back(run(6, {{"b", 1, 0}}));
  const auto lemons = lemon_hosts(runs);
  ASSERT_EQ(lemons.size(), 3u);
  EXPECT_EQ(lemons[0].host, "b");  // 4 runs
  EXPECT_EQ(lemons[1].host, "c");  // 3 runs, the latest trouble later than a's
  EXPECT_EQ(lemons[2].host, "a");
}

TEST(LemonHosts, TheRecordsGoThroughTheHistoryFileAndOlderReadersStillReadTheLine) {
  char pattern[] = "/tmp/ddpl_lemon_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/history";
  {
    RunHistory h = RunHistory::load(path);
    ASSERT_EQ(h.add_and_save(run(100, {{"node-3.cluster", 2, 1}, {"bad host", 1, 0}, {"quiet", 0, 0}})), "");
  }
  std::string line;
  {
    std::ifstream in(path);
    std::getline(in, line);
  }
  // The host with a space and the quiet one are not written; the five old fields come first.
  EXPECT_EQ(line, "v1 0123456789abcdef 100 4.000 0.500 @node-3.cluster/2/1");
  // Garbled and hostile marks beside a good one: only the good one is read.
  {
    std::ofstream out(path, std::ios::app);
    out << "v1 0123456789abcdef 101 4.0 0.5 @a/1/0 @/1/0 @b/x/0 @c/1 @d/1/2/3 @e;rm/1/0 @f/9999999/0 h/1/0\n";
  }
  const RunHistory h = RunHistory::load(path);
  ASSERT_EQ(h.records().size(), 2u);
  ASSERT_EQ(h.records()[0].troubled_hosts.size(), 1u);
  EXPECT_EQ(h.records()[0].troubled_hosts[0].host, "node-3.cluster");
  EXPECT_EQ(h.records()[0].troubled_hosts[0].failures, 2);
  EXPECT_EQ(h.records()[0].troubled_hosts[0].slowdowns, 1);
  ASSERT_EQ(h.records()[1].troubled_hosts.size(), 1u);
  EXPECT_EQ(h.records()[1].troubled_hosts[0].host, "a");
  EXPECT_DOUBLE_EQ(h.records()[1].init_s, 4.0);
  std::filesystem::remove_all(pattern);
}

// A history file in a fresh temporary directory, written line by line.
class DoctorSection : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ddpl_lemon_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/history";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::vector<std::string>& lines) {
    std::ofstream out(path_, std::ios::trunc);
    for (const auto& line : lines) out << line << "\n";
  }
  std::string dir_, path_;
};

TEST_F(DoctorSection, NamesTheLemonHostWithItsRecordAndNotAHostTroubledOnce) {
  write({"v1 0123456789abcdef 1765116000 4.0 0.5 @h3/2/0 @h5/1/0",
         "v1 0123456789abcdef 1765117000 4.0 0.5",
         "v1 0123456789abcdef 1765118000 4.0 0.5 @h3/0/1"});
  EXPECT_EQ(lemon_hosts_section(RunHistory::load(path_)),
            "hosts that caused trouble in 2 or more of the last 3 runs (run history " + path_ + "):\n"
            "  host h3 failed ranks in 1 and was a straggler in 1 of the last 3 runs (last on 2025-12-07 14:33 UTC)\n");
}

TEST_F(DoctorSection, NoneInTheLastRunsOrNoRunYet) {
  write({"v1 0123456789abcdef 1 4.0 0.5 @h5/1/0", "v1 0123456789abcdef 2 4.0 0.5"});
  EXPECT_EQ(lemon_hosts_section(RunHistory::load(path_)),
            "hosts that caused trouble: none in 2 or more of the last 2 runs (run history " + path_ + ")\n");
  std::filesystem::remove(path_);
  EXPECT_EQ(lemon_hosts_section(RunHistory::load(path_)),
            "hosts that caused trouble: none, no run recorded yet in the run history " + path_ + "\n");
}

TEST_F(DoctorSection, GarbledLinesAreCountedAndAnUnreadableHistorySaysWhy) {
  write({"v1 0123456789abcdef 1 4.0 0.5 @h3/1/0", "not a record", "v1 0123456789abcdef 2 4.0 0.5 @h3/1/0",
         std::string(5000, 'x')});
  EXPECT_EQ(lemon_hosts_section(RunHistory::load(path_)),
            "hosts that caused trouble in 2 or more of the last 2 runs (run history " + path_ + "):\n"
            "  host h3 failed ranks in 2 of the last 2 runs (last on 1970-01-01 00:00 UTC)\n"
            "  (2 line(s) of the run history are not records and were skipped)\n");
  EXPECT_EQ(lemon_hosts_section(RunHistory::load(dir_)),
            "hosts that caused trouble: not known, the run history " + dir_ + " is not readable (not a regular file)\n");
}

}  // namespace
