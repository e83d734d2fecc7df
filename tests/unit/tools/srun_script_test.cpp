// launcher/tools/ddplaunch-srun against a fake srun that records its arguments: the exact srun
// command line, ddplaunch options routed through --ddplaunch-opt, and the usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kScript = std::string(SOURCE_DIR) + "/launcher/tools/ddplaunch-srun";

struct ScriptRun {
  int rc = -1;
  std::string output;  // stdout + stderr
};

class SrunScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cluster_srun_test." + std::to_string(::getpid()));
    fs::create_directories(dir_ / "bin");
    // Only bash (the script's #! needs it) and cat (--help) on PATH, plus srun when added.
    fs::create_symlink("/bin/bash", dir_ / "bin" / "bash");
    fs::create_symlink("/bin/cat", dir_ / "bin" / "cat");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void add_fake_srun() {
    std::ofstream f(dir_ / "bin" / "srun");
    f << "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '"
      << (dir_ / "srun.args").string() << "'\nprintf '%s' \"${DDPLAUNCH_TOKEN-unset}\" > '"
      << (dir_ / "srun.token").string() << "'\nexit 7\n";
    f.close();
    fs::permissions(dir_ / "bin" / "srun", fs::perms::owner_all);
  }

  // Runs the script with `args` (already shell-quoted), PATH limited to dir_/bin.
  ScriptRun run(const std::string& env, const std::string& args) {
    std::string out = (dir_ / "out.txt").string();
    std::string cmd = "env -i PATH='" + (dir_ / "bin").string() + "' " + env + " " + kScript +
                      " " + args + " >'" + out + "' 2>&1";
    ScriptRun r;
    int status = std::system(cmd.c_str());
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    r.output = ss.str();
    return r;
  }

  std::vector<std::string> srun_args() {
    std::ifstream in(dir_ / "srun.args");
    std::vector<std::string> args;
    for (std::string line; std::getline(in, line);) args.push_back(line);
    return args;
  }

  // DDPLAUNCH_TOKEN as the fake srun saw it in its environment ("unset" when absent).
  std::string srun_token() {
    std::ifstream in(dir_ / "srun.token");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

bool is_hex_token(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_F(SrunScript, BuildsTheSrunCommandAndPassesItsExitStatus) {
  add_fake_srun();
  ScriptRun r = run("DDPLAUNCH=/opt/ddp/bin/ddplaunch",
              "-N 2 -p gpu --ddplaunch-opt=--max-restarts=2 --ddplaunch-opt=--timeout=90 "
              "-- python3 train.py 'a b' --lr 3e-4");
  EXPECT_EQ(r.rc, 7) << r.output;  // exec'd srun's status comes back unchanged
  std::vector<std::string> want = {
      "--ntasks-per-node=1", "--kill-on-bad-exit=1", "-N", "2", "-p", "gpu",
      "/opt/ddp/bin/ddplaunch", "--slurm", "--max-restarts=2", "--timeout=90", "--",
      "python3", "train.py", "a b", "--lr", "3e-4"};
  EXPECT_EQ(srun_args(), want);
  EXPECT_NE(r.output.find("DDPLAUNCH=/opt/ddp/bin/ddplaunch is not an executable"),
            std::string::npos)
      << r.output;
}

TEST_F(SrunScript, ProgramArgumentsAfterTheSeparatorAreNotInterpreted) {
  add_fake_srun();
  ScriptRun r = run("DDPLAUNCH=ddp", "-N 1 -- prog --ddplaunch-opt=--x -- --help");
  EXPECT_EQ(r.rc, 7) << r.output;
  std::vector<std::string> want = {"--ntasks-per-node=1", "--kill-on-bad-exit=1", "-N", "1",
                                   "ddp", "--slurm", "--", "prog", "--ddplaunch-opt=--x",
                                   "--", "--help"};
  EXPECT_EQ(srun_args(), want);
}

TEST_F(SrunScript, PrintOnlyDoesNotNeedSrun) {
  ScriptRun r = run("DDPLAUNCH=/x/ddplaunch", "-N 2 --ddplaunch-print -- prog 'a b'");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 -N 2 /x/ddplaunch "
                          "--slurm -- prog a\\ b"),
            std::string::npos)
      << r.output;
}

TEST_F(SrunScript, UsageErrors) {
  add_fake_srun();
  ScriptRun r = run("", "-N 2 prog");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("missing '--'"), std::string::npos) << r.output;

  r = run("", "-N 2 --");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("no program after '--'"), std::string::npos) << r.output;

  r = run("", "--ddplaunch-opt --max-restarts=2 -- prog");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("--ddplaunch-opt=OPT"), std::string::npos) << r.output;

  r = run("", "--ddplaunch-typo -- prog");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("unknown option '--ddplaunch-typo'"), std::string::npos) << r.output;

  EXPECT_FALSE(fs::exists(dir_ / "srun.args")) << "srun ran despite a usage error";

  r = run("", "--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.output.find("--ddplaunch-opt=OPT"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DDPLAUNCH=PATH"), std::string::npos) << r.output;
}

TEST_F(SrunScript, MissingSrunIsReported) {
  ScriptRun r = run("DDPLAUNCH=/bin/true", "-N 2 -- prog");
  EXPECT_EQ(r.rc, 127) << r.output;
  EXPECT_NE(r.output.find("'srun' is not on PATH"), std::string::npos) << r.output;
}

TEST_F(SrunScript, EachStepGetsAFreshTokenThroughTheEnvironmentNeverOnTheCommandLine) {
  add_fake_srun();
  ASSERT_EQ(run("DDPLAUNCH=ddp", "-N 2 -- prog").rc, 7);
  const std::string first = srun_token();
  EXPECT_TRUE(is_hex_token(first)) << first;
  for (const auto& arg : srun_args()) EXPECT_EQ(arg.find(first), std::string::npos) << arg;
  ASSERT_EQ(run("DDPLAUNCH=ddp", "-N 2 -- prog").rc, 7);
  EXPECT_TRUE(is_hex_token(srun_token())) << srun_token();
  EXPECT_NE(srun_token(), first);
}

TEST_F(SrunScript, AUserTokenIsKept) {
  add_fake_srun();
  ASSERT_EQ(run("DDPLAUNCH=ddp DDPLAUNCH_TOKEN=mine-42", "-N 2 -- prog").rc, 7);
  EXPECT_EQ(srun_token(), "mine-42");
}

TEST_F(SrunScript, AnExportListCarriesTheToken) {
  add_fake_srun();
  ASSERT_EQ(run("DDPLAUNCH=ddp", "-N 2 --export=PATH,HOME -- prog").rc, 7);
  auto args = srun_args();
  EXPECT_NE(std::find(args.begin(), args.end(), "--export=PATH,HOME,DDPLAUNCH_TOKEN,DDPLAUNCH_TOKEN_ORIGIN"), args.end());
  ASSERT_EQ(run("DDPLAUNCH=ddp", "-N 2 --export NONE -- prog").rc, 7);
  args = srun_args();
  EXPECT_NE(std::find(args.begin(), args.end(), "--export=DDPLAUNCH_TOKEN,DDPLAUNCH_TOKEN_ORIGIN"), args.end());
  ASSERT_EQ(run("DDPLAUNCH=ddp", "-N 2 --export=ALL,X=1 -- prog").rc, 7);
  args = srun_args();
  EXPECT_NE(std::find(args.begin(), args.end(), "--export=ALL,X=1"), args.end());
}
