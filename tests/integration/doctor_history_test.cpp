// `ddplaunch doctor` shows the run history's record of the hosts: with a seeded history
// ($DDPLAUNCH_HISTORY) it names the host that caused trouble in 2 of the last runs, with its
// record, and not a host troubled once; a history it cannot read, or with garbled lines, is
// said as such and the doctor's verdict does not change.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;

namespace {

// A temporary directory for the history file, removed at the end.
class DoctorHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ddpl_doctor_history_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_history(const std::vector<std::string>& lines) {
    const std::string path = dir_ + "/history";
    std::ofstream out(path, std::ios::trunc);
    for (const auto& line : lines) out << line << "\n";
    return path;
  }

  // One local doctor run (no program: doctor starts no worker) with the history at `path`.
  dt::RunResult doctor(const std::string& path) {
    return dt::run_command({DDPLAUNCH_BIN, "doctor", "--standalone", "--nproc-per-node", "1"}, std::chrono::seconds(120),
                           {{"DDPLAUNCH_HISTORY", path}}, dt::kLauncherEnvToUnset);
  }

  std::string dir_;
};

TEST_F(DoctorHistory, NamesTheLemonHostWithItsRecordAndNotAHostTroubledOnce) {
  // Three runs: lemon-7 failed ranks in the first and held the third back; once-3 failed once.
  const std::string path = write_history({"v1 0123456789abcdef 1765116000 4.0 0.5 @lemon-7/2/0 @once-3/1/0",
                                          "v1 0123456789abcdef 1765117000 4.0 0.5",
                                          "v1 0123456789abcdef 1765118000 4.0 0.5 @lemon-7/0/1"});
  const auto r = doctor(path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("hosts that caused trouble in 2 or more of the last 3 runs (run history " + path + "):\n"
                          "  host lemon-7 failed ranks in 1 and was a straggler in 1 of the last 3 runs "
                          "(last on 2025-12-07 14:33 UTC)\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("once-3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("doctor: the job would start."), std::string::npos) << r.output;
}

TEST_F(DoctorHistory, AnUnreadableOrGarbledHistorySaysSoAndTheDoctorStillPasses) {
  const auto unreadable = doctor(dir_);  // a directory, not a history file
  EXPECT_EQ(unreadable.exit_code, 0) << unreadable.output;
  EXPECT_NE(unreadable.output.find("hosts that caused trouble: not known, the run history " + dir_ +
                                   " is not readable (not a regular file)"),
            std::string::npos)
      << unreadable.output;
  EXPECT_NE(unreadable.output.find("doctor: the job would start."), std::string::npos) << unreadable.output;

  const std::string path = write_history({"\x01garbage\xff", "v1 0123456789abcdef 1765116000 4.0 0.5 @once-3/1/0"});
  const auto garbled = doctor(path);
  EXPECT_EQ(garbled.exit_code, 0) << garbled.output;
  EXPECT_NE(garbled.output.find("hosts that caused trouble: none in 2 or more of the last 1 runs (run history " + path +
                                ")\n  (1 line(s) of the run history are not records and were skipped)\n"),
            std::string::npos)
      << garbled.output;
  EXPECT_NE(garbled.output.find("doctor: the job would start."), std::string::npos) << garbled.output;
}

}  // namespace
