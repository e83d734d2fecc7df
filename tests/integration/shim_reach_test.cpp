// The shims reach every worker, however it starts: the Python autoload in a shebang script
// (#!/usr/bin/python3 and #!/usr/bin/env python3), `env python3 x.py`, a bash wrapper that
// execs Python, and `python -m pkg.mod`; PYTHONUNBUFFERED=1 unless the user set it; '\r'
// progress bars shown live with the rank prefix and kept to their latest state in the failure
// report; the NCCL preload maps neither libnccl nor libcuda into a program that does not use
// them; each rank gets its own fresh TORCHELASTIC_ERROR_FILE, never the launcher's.
#include <sys/stat.h>

#include <csignal>
#include <map>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_parsing.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Reports whether the Python shim is loaded in this interpreter, and PYTHONUNBUFFERED.
const char* kProbe =
    "import os, sys\n"
    "print('SHIM', 'ddplaunch_shim' in sys.modules, os.environ.get('PYTHONUNBUFFERED'))\n";

struct TempDir {
  std::string path = dt::temp_dir("it-shim-reach-");
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text, bool executable = false) {
    std::string p = path + "/" + name;
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p) << text;
    if (executable) ::chmod(p.c_str(), 0755);
    return p;
  }
};

dt::RunResult launch(const std::vector<std::string>& program, const std::map<std::string, std::string>& env = {},
                     std::vector<std::string> flags = {"--nproc-per-node", "1"}) {
  std::vector<std::string> argv{DDPLAUNCH_BIN};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return dt::run_command(argv, 120s, env, {"PYTHONUNBUFFERED", "TORCHELASTIC_ERROR_FILE"});
}

TEST(ShimReach, PythonShimLoadsHoweverPythonIsStarted) {
  TempDir dir;
  const std::string shebang = dir.write("shebang.py", std::string("#!/usr/bin/python3\n") + kProbe, true);
  const std::string env_shebang = dir.write("env_shebang.py", std::string("#!/usr/bin/env python3\n") + kProbe, true);
  const std::string plain = dir.write("plain.py", kProbe);
  const std::string wrapper = dir.write("run.sh", "#!/bin/bash\nexec /usr/bin/python3 \"$(dirname \"$0\")/plain.py\"\n");
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/mod.py", kProbe);
  const std::vector<std::vector<std::string>> programs = {
      {shebang}, {env_shebang}, {"env", "python3", plain}, {"bash", wrapper}, {"/usr/bin/python3", "-m", "pkg.mod"}};
  for (const auto& program : programs) {
    auto r = launch(program, {{"PYTHONPATH", dir.path}});
    ASSERT_FALSE(r.timed_out) << program[0] << "\n" << r.output;
    EXPECT_EQ(r.exit_code, 0) << program[0] << "\n" << r.output;
    EXPECT_NE(r.output.find("[rank 0] SHIM True 1"), std::string::npos) << program[0] << "\n" << r.output;
  }
}

TEST(ShimReach, UsersPythonUnbufferedWins) {
  TempDir dir;
  auto r = launch({"/usr/bin/python3", dir.write("p.py", kProbe)}, {{"PYTHONUNBUFFERED", "7"}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] SHIM True 7"), std::string::npos) << r.output;
}

TEST(ShimReach, CarriageReturnProgressIsShownLiveWithThePrefix) {
  TempDir dir;
  // No flush and no -u: live only because the worker gets PYTHONUNBUFFERED=1.
  const std::string script = dir.write("bar.py",
                                       "import time\n"
                                       "for i in range(4):\n"
                                       "    print(f'\\rprogress {i}/3', end='')\n"
                                       "    time.sleep(0.3)\n"
                                       "time.sleep(60)\n");
  dt::BackgroundProcess launcher;
  ASSERT_TRUE(launcher.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--grace", "1", "--", "/usr/bin/python3", script},
                             {}, {"PYTHONUNBUFFERED"}));
  EXPECT_TRUE(launcher.wait_for_output("[rank 0] progress 3/3", 20s)) << launcher.output_so_far();
  EXPECT_EQ(dt::count_of(launcher.output_so_far(), "progress 3/3"), 1) << launcher.output_so_far();
  launcher.send_signal(SIGTERM);
}

TEST(ShimReach, FailureTailKeepsOnlyTheLatestProgressState) {
  TempDir dir;
  const std::string script = dir.write("fail.py",
                                       "import sys\n"
                                       "print('starting', flush=True)\n"
                                       "for i in range(1, 3001):\n"
                                       "    sys.stdout.write(f'\\rstep {i}/3000')\n"
                                       "sys.stdout.write('\\n')\n"
                                       // The exit message on the same pipe as the progress: the
                                       // launcher reads stdout and stderr separately, so on a loaded
                                       // machine a stderr line could land between two progress states.
                                       "sys.stderr = sys.stdout\n"
                                       "raise SystemExit('diverged at step 3000')\n");
  auto r = launch({"/usr/bin/python3", script});
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  auto report_at = r.output.rfind("output lines of rank 0");
  ASSERT_NE(report_at, std::string::npos) << r.output;
  const std::string tail = r.output.substr(report_at);
  EXPECT_NE(tail.find("step 3000/3000"), std::string::npos) << tail;
  EXPECT_EQ(dt::count_of(tail, "| step "), 1) << tail;
  EXPECT_NE(tail.find("diverged at step 3000"), std::string::npos) << tail;
}

TEST(ShimReach, PreloadMapsNoNcclOrCudaIntoANonNcclWorker) {
  // `cat /proc/self/maps` is the worker: what it prints is what is mapped while it runs.
  auto r = launch({"/bin/cat", "/proc/self/maps"}, {}, {"--nproc-per-node", "1", "--shim", "preload"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("libddplaunch_nccl_preload.so"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libnccl"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libcuda"), std::string::npos) << r.output;
}

TEST(ShimReach, EachRankGetsAFreshErrorFileNeverTheLaunchers) {
  TempDir dir;
  const std::string outer = dir.path + "/outer.json";
  const std::string script = dir.write("err.py",
                                       "import os\n"
                                       "path = os.environ['TORCHELASTIC_ERROR_FILE']\n"
                                       "open(path, 'w').write('{}')\n"
                                       "print('ERRFILE', os.environ['RANK'], path, os.environ['GROUP_WORLD_SIZE'],\n"
                                       "      os.environ['PYTHON_EXEC'])\n");
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--nproc-per-node", "2", "--", "/usr/bin/python3", script};
  auto r = dt::run_command(argv, 120s, {{"TORCHELASTIC_ERROR_FILE", outer}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(outer)) << "a worker wrote to the launcher's own error file";
  for (int rank : {0, 1}) {
    const std::string want = "error-rank" + std::to_string(rank) + "-gen0.json 1 /usr/bin/python3";
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
  }
}

}  // namespace
