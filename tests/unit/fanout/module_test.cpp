// The pure parts of the fan-out (launcher/fanout/): quoting that a real shell reads back,
// the ssh and remote ddplaunch commands (run through /bin/sh with stand-ins), the host check
// script run locally and its verdicts, relay prefixes, the flags, and the stdin channel.
#include <gtest/gtest.h>

#include "fanout/rank_line.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "fanout/host_check.h"
#include "fanout/node_relay.h"
#include "fanout/remote_command.h"
#include "fanout/stdin_control.h"

using namespace ddplaunch;
using namespace ddplaunch::fanout;
using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

// Runs `script` with /bin/sh -c (environment: `env_prefix` assignments first) and returns stdout.
std::string sh_output(const std::string& script, const std::string& env_prefix = "") {
  std::string command = env_prefix + " /bin/sh -c " + shell_quote(script);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "(popen failed)";
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/ddplaunch_fanout_XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << text;
    chmod(p.c_str(), mode);
    return p;
  }
};

}  // namespace

TEST(FanoutCommand, ShellQuotingIsReadBackUnchanged) {
  for (std::string word : {"plain", "with space", "it's", "$HOME `id` \"q\" \\", "a\nb", "--lr=3e-4", "*"}) {
    EXPECT_EQ(sh_output("printf '%s' " + shell_quote(word)), word) << word;
  }
  EXPECT_EQ(shell_quote("node01:29400"), "node01:29400");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(FanoutCommand, SshGetsBatchModeAndTheUsersCommand) {
  SshCommand plain = ssh_command({}, 5);
  EXPECT_EQ(plain.words, std::vector<std::string>{"ssh"});
  std::vector<std::string> argv = ssh_argv(plain, "h1", "true");
  EXPECT_EQ(argv.front(), "ssh");
  EXPECT_EQ(argv[argv.size() - 2], "h1");
  EXPECT_EQ(argv.back(), "true");
  auto has = [&](const std::string& option) { return std::find(argv.begin(), argv.end(), option) != argv.end(); };
  EXPECT_TRUE(has("BatchMode=yes"));
  EXPECT_TRUE(has("ConnectTimeout=5"));
  SshCommand custom = ssh_command({{"DDPLAUNCH_SSH", "  ssh -F /tmp/cfg\t-p 2222 "}}, 12.5);
  EXPECT_EQ(custom.words, (std::vector<std::string>{"ssh", "-F", "/tmp/cfg", "-p", "2222"}));
  EXPECT_EQ(custom.connect_timeout_s, 13);
  EXPECT_NE(ssh_command({{"DDPLAUNCH_SSH", " "}}, 5).error.find("DDPLAUNCH_SSH"), std::string::npos);
}

TEST(FanoutCommand, ForwardsTheJobsOptionsButNotWhatTheFanoutDecides) {
  CommandLine cl = parse_command_line({"--hosts", "a,b", "--token", "s3cret", "--nnodes=2", "--max-restarts", "2",
                                       "--set", "token=x", "--set", "timeout.base_s=60", "--nproc-per-node", "4",
                                       "--rdzv-endpoint", "a:1", "--", "train.py", "--lr", "1"},
                                      {});
  ASSERT_TRUE(cl.errors.empty()) << cl.errors.front();
  EXPECT_EQ(cl.fanout.hosts, "a,b");
  EXPECT_EQ(forwarded_options(cl.options, false),
            (std::vector<std::string>{"--max-restarts=2", "--set=timeout.base_s=60", "--nproc-per-node=4"}));
  EXPECT_EQ(forwarded_options(cl.options, true), (std::vector<std::string>{"--max-restarts=2", "--set=timeout.base_s=60"}));
  auto env = forwarded_environment({{"NCCL_DEBUG", "INFO"}, {"HOME", "/root"}, {"DDPLAUNCH_TOKEN", "s"},
                                    {"DDPLAUNCH_SSH", "ssh"}, {"PET_NNODES", "2"}, {"PET_MAX_RESTARTS", "1"},
                                    {"PYTHONPATH", "/x"}});
  EXPECT_EQ(env, (std::vector<std::pair<std::string, std::string>>{
                     {"NCCL_DEBUG", "INFO"}, {"PET_MAX_RESTARTS", "1"}, {"PYTHONPATH", "/x"}}));
}

TEST(FanoutCommand, TheRemoteCommandRunsThereAsTyped) {
  TempDir dir;
  // A stand-in launcher that prints its arguments and two variables, one per line.
  std::string launcher = dir.write("fake ddplaunch", "#!/bin/sh\necho \"PWD=$PWD\"\necho \"NCCL_DEBUG=$NCCL_DEBUG\"\n"
                                                     "echo \"CVD=$CUDA_VISIBLE_DEVICES\"\nfor a; do echo \"$a\"; done\n",
                                   0755);
  NodeLaunch launch;
  launch.node_rank = 1;
  launch.node_count = 3;
  launch.master = "198.18.0.11:29400";
  launch.launcher = launcher;
  launch.cwd = dir.path;
  launch.host = cluster::FanoutHost{"h2", 4, {0, 2}};
  launch.env = {{"NCCL_DEBUG", "INFO with space"}};
  launch.options = {"--max-restarts=2"};
  launch.program = {"train.py", "--name", "it's mine"};
  const std::string out = sh_output(launch_command(launch));
  // The variables go on stdin (node_variables), never into the command line.
  EXPECT_EQ(out, "PWD=" + dir.path + "\nNCCL_DEBUG=\nCVD=\n--nnodes\n3\n--node-rank\n1\n"
                 "--rdzv-endpoint\n198.18.0.11:29400\n--token-stdin\n--env-stdin\n--stop-on-stdin-eof\n"
                 "--max-restarts=2\n--nproc-per-node\n2\n--\ntrain.py\n--name\nit's mine\n");
  launch.env.emplace_back("CUDA_VISIBLE_DEVICES", "a user's, overridden by the host's slots");
  EXPECT_EQ(node_variables(launch), (Variables{{"NCCL_DEBUG", "INFO with space"}, {"CUDA_VISIBLE_DEVICES", "0,2"}}));
}

TEST(FanoutHostCheck, TheScriptReportsWhatTheHostHas) {
  TempDir dir;
  std::string launcher = dir.write("ddplaunch", "#!/bin/sh\necho 'ddplaunch 9.9.9'\n", 0755);
  dir.write("train.py", "print(1)\n", 0644);
  CheckRequest request;
  request.cwd = dir.path;
  request.launcher = launcher;
  request.needed = needed_programs({"train.py"}, {"/bin/sh", "-u", "train.py"});
  request.needed.push_back({"no-such-program-4711", {"no-such-program-4711"}, false});
  request.needed.push_back({"./train.py", {"./train.py"}, false});  // there, but not executable
  std::string command = check_command(request);
  ASSERT_EQ(command.rfind("exec /bin/sh -c ", 0), 0u) << command;
  const std::string output = sh_output(command, "SSH_CONNECTION='198.18.0.12 40000 198.18.0.11 22'");
  HostReport report = parse_check_output("Welcome to host 1!\n" + output, request);
  EXPECT_EQ(report.reached_address, "198.18.0.11") << output;
  EXPECT_TRUE(report.cwd_found) << output;
  EXPECT_EQ(report.launcher, launcher);
  EXPECT_EQ(report.version, "ddplaunch 9.9.9");
  EXPECT_EQ(report.missing, (std::vector<std::string>{"no-such-program-4711", "./train.py"})) << output;

  CheckRun run;
  run.output = output;
  std::string problem = check_problem(run, report, request, "ddplaunch 1.0.0");
  EXPECT_NE(problem.find(launcher + " is 'ddplaunch 9.9.9', this one is 'ddplaunch 1.0.0'"), std::string::npos) << problem;
  EXPECT_NE(problem.find("the program is missing there: no-such-program-4711, ./train.py not found"), std::string::npos)
      << problem;
  report.missing.clear();
  EXPECT_EQ(check_problem(run, report, request, "ddplaunch 9.9.9"), "");
}

TEST(FanoutHostCheck, NeededProgramsFollowHowTheProgramRuns) {
  auto script = needed_programs({"train.py", "--lr"}, {"/usr/bin/python3", "-u", "train.py", "--lr"});
  ASSERT_EQ(script.size(), 2u);
  EXPECT_EQ(script[0].alternatives, (std::vector<std::string>{"/usr/bin/python3", "python3"}));
  EXPECT_TRUE(script[1].file);
  EXPECT_EQ(script[1].label, "train.py");
  auto module = needed_programs({"pkg.train"}, {"/opt/py", "-u", "-m", "pkg.train"});
  ASSERT_EQ(module.size(), 1u);
  EXPECT_EQ(module[0].alternatives, std::vector<std::string>{"/opt/py"});
  auto typed_python = needed_programs({"python3", "train.py"}, {"python3", "train.py"});
  ASSERT_EQ(typed_python.size(), 2u);
  EXPECT_TRUE(typed_python[1].file);
  EXPECT_EQ(typed_python[1].label, "train.py");
  auto binary = needed_programs({"./train_binary"}, {"./train_binary"});
  ASSERT_EQ(binary.size(), 1u);
  EXPECT_FALSE(binary[0].file);
}

TEST(FanoutHostCheck, SshFailuresAreNamedWithTheFix) {
  CheckRequest request{"/work", "/opt/ddplaunch/bin/ddplaunch", {}};
  CheckRun refused;
  refused.status.code = 255;
  refused.errors = "ssh: connect to host 198.18.0.12 port 22: Connection refused\n";
  std::string why = check_problem(refused, {}, request, "ddplaunch 1");
  EXPECT_NE(why.find("ssh could not run a command there: ssh: connect to host 198.18.0.12 port 22: Connection refused"),
            std::string::npos) << why;
  CheckRun denied;
  denied.status.code = 255;
  denied.errors = "root@h2: Permission denied (publickey).\n";
  EXPECT_NE(check_problem(denied, {}, request, "ddplaunch 1").find("ssh-copy-id"), std::string::npos);
  CheckRun slow;
  slow.timed_out = true;
  slow.timeout_s = 30;
  std::string never = check_problem(slow, {}, request, "ddplaunch 1");
  EXPECT_NE(never.find("no answer within 30 s: the check never started there"), std::string::npos) << never;
  EXPECT_NE(never.find("~/.bashrc"), std::string::npos) << never;
  slow.output = "ddplaunch-check ssh 198.18.0.11 40000 198.18.0.12 22\nddplaunch-check launcher /opt/x/ddplaunch\n";
  std::string hung = check_problem(slow, parse_check_output(slow.output, request), request, "ddplaunch 1");
  EXPECT_NE(hung.find("ssh logged in, but `/opt/x/ddplaunch --version` there did not finish"), std::string::npos)
      << hung;
  slow.output = "ddplaunch-check ssh 198.18.0.11 40000 198.18.0.12 22\n";
  std::string shell = check_problem(slow, parse_check_output(slow.output, request), request, "ddplaunch 1");
  EXPECT_NE(shell.find("ssh logged in, but the check's shell did not finish"), std::string::npos) << shell;
  CheckRun bare;  // the command ran, found nothing
  bare.output = "ddplaunch-check ssh \n";
  std::string missing = check_problem(bare, parse_check_output(bare.output, request), request, "ddplaunch 1");
  EXPECT_NE(missing.find("the directory /work does not exist there"), std::string::npos) << missing;
  EXPECT_NE(missing.find("ddplaunch is not installed there: neither /opt/ddplaunch/bin/ddplaunch nor ddplaunch on the "
                         "PATH"),
            std::string::npos)
      << missing;
}

TEST(FanoutRelay, LinesThatNameTheirNodeAreNotPrefixedAgain) {
  EXPECT_EQ(relay_prefix(1, "h2", "[node 1 rank 3] loss 0.5"), "");
  EXPECT_EQ(relay_prefix(1, "h2", "12:00:00.000 ddplaunch[node 1] info: joined"), "");
  EXPECT_EQ(relay_prefix(1, "h2", "12:00:00.000 ddplaunch info: resolving"), "[node 1 h2]");
  EXPECT_EQ(relay_prefix(1, "h2", "ssh: connect to host h2 port 22: Connection refused"), "[node 1 h2]");
  EXPECT_EQ(relay_prefix(1, "h2", "[node 11 rank 3] x"), "[node 1 h2]");  // another node's tag is not ours
}

TEST(FanoutStdin, TheTokenLineLeavesTheRestForTheControlChannel) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text = "s3cret-token\r\nSIGINT\n";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  TokenLine line = read_token_line(fds[0], 5s);
  EXPECT_EQ(line.error, "");
  EXPECT_EQ(line.token, "s3cret-token");
  char rest[16] = {};
  EXPECT_EQ(read(fds[0], rest, sizeof rest), 7);
  EXPECT_STREQ(rest, "SIGINT\n");
  // Nothing written: bounded, and says what to do.
  TokenLine none = read_token_line(fds[0], 50ms);
  EXPECT_NE(none.error.find("no token line on stdin"), std::string::npos) << none.error;
  close(fds[1]);
  EXPECT_NE(read_token_line(fds[0], 5s).error.find("empty"), std::string::npos);
  close(fds[0]);
  EXPECT_EQ(control_signal("SIGINT"), SIGINT);
  EXPECT_EQ(control_signal("SIGUSR1"), SIGUSR1);
  EXPECT_EQ(control_signal("SIGKILL"), 0);
  EXPECT_EQ(control_signal("sigint"), 0);
}

// Any bytes an environment value can hold travel whole, and the block leaves the control
// lines after it on stdin.
TEST(FanoutStdin, TheVariablesBlockCarriesAnyValueAndLeavesTheRest) {
  const Variables sent = {{"WANDB_API_KEY", "k3y=with'quotes\"\nand a newline\r\n"},
                          {"EMPTY", ""},
                          {"UNICODE", "caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\x91"},
                          {"SPACES", "  a  b  "}};
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text = environment_block(sent) + "SIGINT\n";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ReceivedVariables received = read_environment_block(fds[0], 5s);
  EXPECT_EQ(received.error, "");
  EXPECT_EQ(received.variables, sent);
  char rest[16] = {};
  EXPECT_EQ(read(fds[0], rest, sizeof rest), 7);
  EXPECT_STREQ(rest, "SIGINT\n");
  // Nothing written: bounded, and named.
  EXPECT_NE(read_environment_block(fds[0], 50ms).error.find("no header line"), std::string::npos);
  // A block cut short by the end of stdin.
  const std::string cut = environment_block(sent).substr(0, 30);
  ASSERT_EQ(write(fds[1], cut.data(), cut.size()), static_cast<ssize_t>(cut.size()));
  close(fds[1]);
  EXPECT_NE(read_environment_block(fds[0], 5s).error.find("before stdin ended"), std::string::npos);
  close(fds[0]);
}

TEST(FanoutStdin, AMalformedVariablesBlockIsRefusedWithWhatIsWrong) {
  auto error_of = [](const std::string& text) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    EXPECT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fds[1]);
    std::string error = read_environment_block(fds[0], 5s).error;
    close(fds[0]);
    return error;
  };
  EXPECT_NE(error_of("SIGINT\n").find("expected a line 'DDPLAUNCH-ENV <count> <bytes>'"), std::string::npos);
  EXPECT_NE(error_of("DDPLAUNCH-ENV 1 -4\n").find("bad header"), std::string::npos);
  EXPECT_NE(error_of("DDPLAUNCH-ENV 1 99999999999\n").find("at most"), std::string::npos);
  EXPECT_NE(error_of("DDPLAUNCH-ENV 2 4\nA\0b\0"s).find("announces 2 variable(s), the block holds 1"),
            std::string::npos);
  EXPECT_NE(error_of("DDPLAUNCH-ENV 1 5\n1A\0b\0"s).find("no valid name"), std::string::npos);
  EXPECT_NE(error_of("DDPLAUNCH-ENV 1 4\nA\0bc"s).find("cut short"), std::string::npos);
  EXPECT_EQ(error_of("DDPLAUNCH-ENV 0 0\n"), "");  // no variables to pass
}

TEST(FanoutFlags, RemoteSideOptionsAreRecorded) {
  CommandLine cl = parse_command_line({"--token-stdin", "--stop-on-stdin-eof", "--hostfile", "hosts.txt", "--include",
                                       "a:0,1", "p"},
                                      {});
  ASSERT_TRUE(cl.errors.empty()) << cl.errors.front();
  EXPECT_TRUE(cl.token_stdin);
  EXPECT_TRUE(cl.stop_on_stdin_eof);
  EXPECT_EQ(cl.fanout.hostfile, "hosts.txt");
  EXPECT_EQ(cl.fanout.include, "a:0,1");
  EXPECT_TRUE(cl.fanout.requested());
  EXPECT_FALSE(parse_command_line({"p"}, {}).fanout.requested());
}

TEST(FanoutRankLine, AWorkersRelayedLineIsTakenApartAnythingElseIsNot) {
  auto line = ddplaunch::fanout::parse_rank_line("[node 1 rank 5] loss 0.25");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->node, 1);
  EXPECT_EQ(line->rank, 5);
  EXPECT_EQ(line->text, "loss 0.25");
  EXPECT_EQ(ddplaunch::fanout::parse_rank_line("[node 0 rank 0] ")->text, "");
  for (const char* other : {"12:00:00.000 ddplaunch[node 1] info: generation 0", "[node 1 ranks 4-7] done",
                            "[rank 3] a single node's prefix", "[node x rank 1] t", "[node 1 rank -1] t",
                            "[node 1 rank 5]no space", "ssh: connect to host h2 port 22: Connection refused"})
    EXPECT_FALSE(ddplaunch::fanout::parse_rank_line(other)) << other;
}
