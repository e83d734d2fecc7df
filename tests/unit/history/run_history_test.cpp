// RunHistory: records per job signature in a bounded local file; p99 seeds; garbage and
// absurd values ignored; atomic saves.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "history/run_history.h"

namespace {

using namespace ddplaunch;

class HistoryFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ddpl_history_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/state/history";  // the folder does not exist yet: save creates it
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_, path_;
};

TEST(JobSignature, StableAndDifferentForDifferentJobs) {
  EXPECT_EQ(job_signature("abc", 2, "eth0"), job_signature("abc", 2, "eth0"));
  EXPECT_NE(job_signature("abc", 2, "eth0"), job_signature("abc", 4, "eth0"));
  EXPECT_NE(job_signature("abc", 2, "eth0"), job_signature("abd", 2, "eth0"));
  EXPECT_EQ(job_signature("abc", 2, "eth0").size(), 16u);
}

TEST_F(HistoryFile, MissingFileIsEmptyAndSeedsNeedThreeSamples) {
  std::string warning;
  auto h = RunHistory::load(path_, &warning);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_TRUE(h.records().empty());
  const auto sig = job_signature("prog", 2, "eth0");
  EXPECT_EQ(h.add_and_save({sig, 1, 4.0, 0.5}), "");
  EXPECT_EQ(h.add_and_save({sig, 2, 6.0, 0.7}), "");
  auto early = RunHistory::load(path_).seed(sig);
  EXPECT_EQ(early.samples, 2);
  EXPECT_EQ(early.init_p99_s, -1);
  EXPECT_EQ(h.add_and_save({sig, 3, 5.0, 2.5}), "");
  EXPECT_EQ(h.add_and_save({job_signature("other", 2, "eth0"), 4, 500.0, 90.0}), "");  // another job
  auto seed = RunHistory::load(path_).seed(sig);
  EXPECT_EQ(seed.samples, 3);
  EXPECT_DOUBLE_EQ(seed.init_p99_s, 6.0);
  EXPECT_DOUBLE_EQ(seed.step_p99_s, 2.5);
  EXPECT_NE(seed.explained.find("history: p99 of 3 run(s) (" + path_ + ")"), std::string::npos) << seed.explained;
}

TEST_F(HistoryFile, GarbageLinesAndAbsurdValuesAreIgnored) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  const auto sig = job_signature("prog", 1, "");
  std::ofstream(path_) << "not a record\n"
                       << "v1 " << sig << " 1 3.0 0.2\n"
                       << "v2 " << sig << " 1 3.0 0.2\n"
                       << "v1 " << sig << " 1 inf 0.2\n"
                       << "v1 " << sig << " 1 1e300 0.4\n"
                       << "v1 " << sig << " 1 4.0 0.3\n"
                       << "v1 " << sig << " 1 5.0 -7\n";
  auto h = RunHistory::load(path_);
  // Dropped: the garbage line, the v2 line and the unparsable "inf"; the 1e300 and -7 values
  // are kept as "unknown" (-1) so the rest of their line still counts.
  ASSERT_EQ(h.records().size(), 4u);
  auto seed = h.seed(sig);
  EXPECT_DOUBLE_EQ(seed.init_p99_s, 5.0);   // from 3.0, 4.0, 5.0
  EXPECT_DOUBLE_EQ(seed.step_p99_s, 0.4);   // from 0.2, 0.4, 0.3
}

// The record reader skips the stream (up to kMaxRecords lines at every start) but
// must take and refuse exactly what `std::istringstream >> field` does; the reference is that.
TEST_F(HistoryFile, RecordsAreReadAsAStreamReadsThem) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  const std::vector<std::string> lines = {
      "v1 abc 1 3.0 0.2", "v1 abc 1 3.0 0.2 trailing words", "v1\tabc\t+5\t.5\t5.\r", "  v1   abc  7  2  3",
      "v1 abc 1 1e 0.2", "v1 abc 1 1e+ 0.2", "v1 abc 1 1e400 0.2", "v1 abc 1 -1e400 0.2", "v1 abc 1 1e-400 0.2",
      "v1 abc 1 nan 0.2", "v1 abc 1 inf 0.2", "v1 abc 1 0x10 0.2", "v1 abc 1 2.0-3", "v1 abc 1 2.0.5 1",
      "v1 abc 1 . 1", "v1 abc 1 .e5 1", "v1 abc 1 +.5e-1 -0", "v1 abc 99999999999999999999 1 1",
      "v1 abc -9223372036854775808 1 1", "v1 abc 12x 1 1", "v1 abc 12.5 1 1", "v1 abc - 1 1", "v1 abc 1 1",
      "v1 abc", "v1", "", "v2 abc 1 1 1", "V1 abc 1 1 1", "v1 abc 1 1E3 2e+2", "v1 abc 1 1e3x 2"};
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string version;
    RunRecord want;
    const bool ok = (in >> version >> want.signature >> want.unix_time >> want.init_s >> want.max_step_s) && version == "v1";
    std::ofstream(path_, std::ios::trunc) << line << "\n";
    const auto got = RunHistory::load(path_).records();
    ASSERT_EQ(got.size(), ok ? 1u : 0u) << "line: '" << line << "'";
    if (!ok) continue;
    EXPECT_EQ(got[0].signature, want.signature) << line;
    EXPECT_EQ(got[0].unix_time, want.unix_time) << line;
    auto sane = [](double v) { return std::isfinite(v) && v >= 0 && v <= 7 * 24 * 3600.0 ? v : -1; };
    EXPECT_DOUBLE_EQ(got[0].init_s, sane(want.init_s)) << line;
    EXPECT_DOUBLE_EQ(got[0].max_step_s, sane(want.max_step_s)) << line;
  }
}

TEST_F(HistoryFile, BoundedToTheNewestRecordsAndSavedAtomically) {
  auto h = RunHistory::load(path_);
  const auto sig = job_signature("prog", 8, "ib0");
  for (std::size_t i = 0; i < RunHistory::kMaxRecords + 50; ++i)
    ASSERT_EQ(h.add_and_save({sig, static_cast<long long>(i), 1.0, 0.1}), "");
  auto again = RunHistory::load(path_);
  ASSERT_EQ(again.records().size(), RunHistory::kMaxRecords);
  EXPECT_EQ(again.records().front().unix_time, 50);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path_).parent_path()))
    EXPECT_EQ(entry.path().filename(), "history") << "a temp file was left behind";
}

TEST_F(HistoryFile, AnUnwritableLocationSaysWhyAndLosesNothingElse) {
  std::ofstream(dir_ + "/blocker") << "x";
  auto h = RunHistory::load(dir_ + "/blocker/history");
  std::string why = h.add_and_save({"s", 1, 1.0, 1.0});
  EXPECT_NE(why.find("could not write the run history"), std::string::npos) << why;
}

}  // namespace

// One forged run (a week-long step) must not become every later run's seed.
TEST_F(HistoryFile, OneAbsurdRunIsNotTheSeed) {
  RunHistory h = RunHistory::load(path_);
  const auto sig = job_signature("prog", 2, "eth0");
  for (int i = 0; i < 5; ++i) ASSERT_EQ(h.add_and_save({sig, i, 4.0 + i * 0.1, 0.5 + i * 0.1}), "");
  ASSERT_EQ(h.add_and_save({sig, 9, 4.2, 604800.0}), "");
  auto seed = RunHistory::load(path_).seed(sig);
  EXPECT_EQ(seed.samples, 6);
  EXPECT_DOUBLE_EQ(seed.step_p99_s, 0.9);
  EXPECT_DOUBLE_EQ(seed.init_p99_s, 4.4);
}

TEST_F(HistoryFile, AFifoAtThePathIsNotReadAndDoesNotBlock) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  std::string warning;
  auto h = RunHistory::load(path_, &warning);  // returns: O_NONBLOCK, and a FIFO is refused
  EXPECT_TRUE(h.records().empty());
  EXPECT_NE(warning.find("not a regular file"), std::string::npos) << warning;
}

TEST_F(HistoryFile, AHugeFileIsReadOnlyForItsNewestPart) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  const auto sig = job_signature("prog", 1, "");
  {
    std::ofstream out(path_);
    const std::string junk(1 << 20, 'x');  // one 64 MiB "line" of junk, then real records
    for (int i = 0; i < 64; ++i) out << junk;
    out << "\n";
    for (int i = 0; i < 3; ++i) out << "v1 " << sig << " " << i << " 3.0 0.2\n";
  }
  auto h = RunHistory::load(path_);
  ASSERT_EQ(h.records().size(), 3u);
  EXPECT_EQ(h.seed(sig).samples, 3);
}
