// The files the launcher writes under --log-dir, against what others do to that directory and
// what the disk does: the directory swapped for a symlink after the start (the files still go
// into the directory the launcher opened), and a full file system (said once per file, naming
// it and the error; the job goes on). Real launchers, real workers.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "multi_node_job.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace {

using namespace std::chrono_literals;
namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;

std::vector<std::string> stacks_files_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().rfind("stacks-", 0) == 0) found.push_back(entry.path().string());
  return found;
}

// After the start someone with write access to the parent moves --log-dir away and puts a
// symlink to a directory of theirs in its place: the stacks file of a later round still goes
// into the directory the launcher opened (before: into the link's target).
TEST(HostileFiles, ALogDirSwappedForASymlinkAfterTheStartKeepsItsFiles) {
  const fs::path base = dt::temp_dir("ddplaunch-swap-");
  const fs::path log_dir = base / "logs", moved = base / "logs.moved", elsewhere = base / "attacker";
  fs::create_directories(elsewhere);
  dt::MultiNodeJob job = dt::new_loopback_job(DDPLAUNCH_BIN, 2, "swap-logdir",
                                              {"--token", "swap-token-0123456789", "--history-file", "off"});
  const std::vector<std::string> program{FAKE_WORKER_BIN, "--report-init", "--sleep-ms", "8000"};
  std::vector<std::unique_ptr<dt::BackgroundProcess>> nodes;
  nodes.push_back(dt::start_node(dt::node_argv(job, 0, 1, {"--log-dir", log_dir.string()}, program)));
  ASSERT_TRUE(dt::wait_listening(*nodes[0]));
  nodes.push_back(dt::start_node(dt::node_argv(job, 1, 1, {}, program)));
  ASSERT_TRUE(nodes[0]->wait_for_output("all 2 ranks finished init", 60s)) << nodes[0]->output_so_far();
  fs::rename(log_dir, moved);
  fs::create_directory_symlink(elsewhere, log_dir);
  dt::RunResult stacks = dt::run_command({DDPLAUNCH_BIN, "stacks", "--master", job.master(), "--job-id", "swap-logdir",
                                          "--token", "swap-token-0123456789"},
                                         60s);
  EXPECT_EQ(stacks.exit_code, 0) << stacks.output;
  auto results = dt::wait_all(nodes, 60s);
  EXPECT_TRUE(stacks_files_in(elsewhere).empty()) << "a stacks file followed the symlink into " << elsewhere;
  EXPECT_EQ(stacks_files_in(moved).size(), 1u) << stacks.output << results[0].output;
  EXPECT_TRUE(fs::exists(moved / "rank_0.log"));
  fs::remove_all(base);
}

// A file system that fills up under --log-dir: the rank's log is cut, said once with the file
// and the error, and the job goes on (before: cut silently). Needs root for a small tmpfs.
TEST(HostileFiles, AFullLogDirIsSaidOnceNamingTheFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (mounts a 64 KiB tmpfs as --log-dir)";
  const fs::path dir = dt::temp_dir("ddplaunch-full-");
  ASSERT_EQ(::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k"), 0) << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() {
      ::umount2(dir.c_str(), MNT_DETACH);
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } unmount{dir};
  dt::RunResult r = dt::run_command({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--shim", "none", "--log-dir",
                                     dir.string(), "--", "/bin/sh", "-c", "seq 1 40000; echo LAST-LINE"},
                                    60s);
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(r.output.size() > 3000 ? r.output.size() - 3000 : 0);
  EXPECT_EQ(dt::count_of(r.output, "is missing lines from now on"), 1) << r.output.substr(0, 3000);
  EXPECT_NE(r.output.find((dir / "rank_0.log").string() + " is missing lines from now on: No space left on device"),
            std::string::npos);
  EXPECT_NE(r.output.find("LAST-LINE"), std::string::npos);  // the terminal still had every line
}

}  // namespace
