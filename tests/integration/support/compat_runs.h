// Running one torchrun launch line under Debian's torchrun and under ddplaunch, for
// torchrun_compat_test: a workspace with the compat_scripts/, both runs with the same
// environment, and the comparisons and output probes the cases share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "launcher_test_env.h"
#include "output_parsing.h"
#include "process_runner.h"

namespace ddplaunch::testing::compat {

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using std::chrono::seconds;

inline constexpr auto kRunLimit = seconds(120);  // one launcher run, torch imports on a loaded machine included
inline const std::string kPython = PYTHON_WITH_TORCH;
inline const std::string kTorchrun = TORCHRUN_BIN;

// The ddplaunch under test: this build's, or the program named by TORCHRUN_COMPAT_DDPLAUNCH
// (an installed ddplaunch, or a wrapper around another build).
inline std::string ddplaunch_bin() {
  const char* other = std::getenv("TORCHRUN_COMPAT_DDPLAUNCH");
  return other && *other ? other : DDPLAUNCH_BIN;
}

// Empty when torchrun and torch are usable, else why not.
inline std::string missing_reason() {
  static const std::string reason = [] {
    if (!fs::exists(kTorchrun)) return kTorchrun + " is missing (Debian package python3-torch); nothing to compare with";
    return dt::torch_missing_reason(kPython);
  }();
  return reason;
}

// A fresh copy of compat_scripts/ (modes kept) in a temporary directory, with a bin/ folder whose
// python and python3 are the torch interpreter: `python train.py` finds torch whatever PATH
// held before (this machine's pyenv python has none). Removed with the object.
struct Workspace {
  std::string dir = dt::temp_dir("compat-");
  std::string scripts = dir + "/scripts";
  Workspace() {
    fs::copy(std::string(SOURCE_DIR) + "/tests/integration/compat_scripts", scripts, fs::copy_options::recursive);
    for (const char* exe : {"buffered_wrapper.sh", "direct_train.py"})
      fs::permissions(scripts + "/" + exe, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add);
    fs::create_directories(dir + "/bin");
    fs::create_symlink(kPython, dir + "/bin/python");
    fs::create_symlink(kPython, dir + "/bin/python3");
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string script(const std::string& name) const { return scripts + "/" + name; }
  std::string fresh_dir(const std::string& name) const {
    fs::create_directories(dir + "/" + name);
    return dir + "/" + name;
  }
};

// One launch line, split where the two launchers differ: flags both take, flags only ddplaunch
// gets (the short deadline), and the program with its arguments.
struct LaunchLine {
  std::vector<std::string> flags;            // torchrun flags, given to both unchanged
  std::vector<std::string> ddplaunch_only;   // after `flags`, before the program
  std::vector<std::string> program;          // script (or module / executable) and its arguments
  std::map<std::string, std::string> env;    // extra environment for both launchers
};

struct BothRuns {
  dt::RunResult torchrun, ddplaunch;
  std::vector<std::string> torchrun_argv, ddplaunch_argv;

  // Both command lines and outputs, for the failure messages (SCOPED_TRACE).
  std::string report() const {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
      return s;
    };
    auto one = [&](const char* label, const std::vector<std::string>& argv, const dt::RunResult& r) {
      if (argv.empty()) return std::string();  // this launcher was not run
      return std::string("===== ") + label + ": " + join(argv) + "\n===== exit " + std::to_string(r.exit_code) +
             (r.term_signal ? " signal " + std::to_string(r.term_signal) : "") + (r.timed_out ? " (TIMED OUT)" : "") +
             " after " + std::to_string(r.seconds) + " s\n" + r.output + "\n";
    };
    return one("torchrun", torchrun_argv, torchrun) + one("ddplaunch", ddplaunch_argv, ddplaunch);
  }
};

// Prints both command lines and outputs once, when the test has failed by the time it ends
// (an ASSERT's early return included).
class ReportOnFailure {
 public:
  explicit ReportOnFailure(const BothRuns& b) : b_(b) {}
  ~ReportOnFailure() {
    if (::testing::Test::HasFailure()) std::cout << b_.report() << std::flush;
  }

 private:
  const BothRuns& b_;
};

// Both launchers get PYTHONUNBUFFERED unset (this machine exports it), no inherited contract
// variables, and the workspace's bin/ first on PATH.
inline dt::RunResult run_launcher(const Workspace& ws, const std::vector<std::string>& argv, const LaunchLine& line) {
  std::map<std::string, std::string> env = line.env;
  const char* path = std::getenv("PATH");
  env["PATH"] = ws.dir + "/bin:/usr/bin:/bin" + (path ? std::string(":") + path : "");
  const std::vector<std::string> unset{"PYTHONUNBUFFERED", "OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT",
                                       "RANK",             "WORLD_SIZE",      "LOCAL_RANK"};
  return dt::run_command(argv, kRunLimit, env, unset);
}

// torchrun gets what Debian's 1.13 needs to run at all (-r 1 -t 1 --log_dir: its default
// redirects crash) and a 1 s monitor interval (5 s in 1.13) to keep the test short.
inline void run_torchrun(const Workspace& ws, const LaunchLine& line, BothRuns& b) {
  b.torchrun_argv = {kTorchrun, "-r", "1", "-t", "1", "--log_dir", ws.fresh_dir("torchrun-logs"),
                     "--monitor_interval", "1"};
  // --standalone is, in torchrun 1.13's run.py, exactly `--rdzv_backend c10d --rdzv_endpoint
  // localhost:29400 --rdzv_id <uuid>`: the same line on a port of this test's own, so that
  // reference runs of tests running in parallel need not take turns at 29400.
  for (const std::string& flag : line.flags) {
    if (flag != "--standalone") {
      b.torchrun_argv.push_back(flag);
      continue;
    }
    const int port = dt::free_tcp_port();
    EXPECT_GT(port, 0) << "no free port for torchrun's standalone rendezvous";
    b.torchrun_argv.insert(b.torchrun_argv.end(), {"--rdzv_backend", "c10d", "--rdzv_endpoint",
                                                   "localhost:" + std::to_string(port), "--rdzv_id",
                                                   "standalone-" + std::to_string(port)});
  }
  b.torchrun_argv.insert(b.torchrun_argv.end(), line.program.begin(), line.program.end());
  b.torchrun = run_launcher(ws, b.torchrun_argv, line);
}

inline void run_ddplaunch(const Workspace& ws, const LaunchLine& line, BothRuns& b) {
  b.ddplaunch_argv = {ddplaunch_bin()};
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.flags.begin(), line.flags.end());
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.ddplaunch_only.begin(), line.ddplaunch_only.end());
  b.ddplaunch_argv.insert(b.ddplaunch_argv.end(), line.program.begin(), line.program.end());
  b.ddplaunch = run_launcher(ws, b.ddplaunch_argv, line);
}

// The launch line under torchrun, then under ddplaunch (one after the other: two cores).
inline BothRuns run_both(const Workspace& ws, const LaunchLine& line) {
  BothRuns b;
  run_torchrun(ws, line, b);
  run_ddplaunch(ws, line, b);
  return b;
}

// torchrun's own spelling of a single-node, two-worker job.
inline std::vector<std::string> standalone_two_workers() {
  return {"--standalone", "--nnodes", "1", "--nproc_per_node", "2"};
}

// Both runs ended within the bound, and ddplaunch ended as torchrun did or better (0 where
// torchrun failed).
inline void expect_same_or_better(const BothRuns& b) {
  EXPECT_FALSE(b.torchrun.timed_out) << "torchrun ran past " << kRunLimit.count() << " s";
  EXPECT_FALSE(b.ddplaunch.timed_out) << "ddplaunch ran past " << kRunLimit.count() << " s";
  if (b.ddplaunch.exit_code != 0) {
    EXPECT_EQ(b.ddplaunch.exit_code, b.torchrun.exit_code) << "ddplaunch ended worse";
  }
}

// True when some line of `output` contains `needle` but not `unless` ("restarting the group",
// not "not restarting").
inline bool has_line_with(const std::string& output, const std::string& needle, const std::string& unless) {
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    if (line.find(needle) != std::string::npos && line.find(unless) == std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

// The text from ddplaunch's root-cause report on ("" when it printed none).
inline std::string root_cause_section(const std::string& output) {
  auto at = output.find("root cause");
  return at == std::string::npos ? std::string() : output.substr(at);
}

// NAME=VALUE lines of env_dump.py's file.
inline std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace ddplaunch::testing::compat

#define SKIP_WITHOUT_TORCHRUN()                                        \
  do {                                                                 \
    if (!::ddplaunch::testing::compat::missing_reason().empty()) GTEST_SKIP() << ::ddplaunch::testing::compat::missing_reason();   \
  } while (0)
