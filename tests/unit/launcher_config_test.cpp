// LaunchConfig from YAML and the command line: defaults documented in configs/default.yaml,
// unknown keys and bad values named with their line, CLI overriding YAML, validation.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/command_line.h"
#include "config/job_setup.h"
#include "config/launch_config.h"
#include "config/yaml_config.h"

using namespace ddplaunch;

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(YamlConfig, DefaultYamlDocumentsEveryKeyWithTheBuiltInDefaults) {
  LaunchConfig from_file;
  from_file.nodes = 99;  // must be reset by the file
  auto errors = apply_yaml_file(std::string(SOURCE_DIR) + "/configs/default.yaml", from_file);
  ASSERT_TRUE(errors.empty()) << errors.front();
  LaunchConfig built_in;
  from_file.program = built_in.program = {"x"};
  EXPECT_EQ(describe(from_file), describe(built_in));
}

TEST(YamlConfig, ShippedProfilesParse) {
  for (const char* name : {"/configs/slurm.yaml", "/configs/examples/two-node-debug.yaml"}) {
    LaunchConfig c;
    auto errors = apply_yaml_file(std::string(SOURCE_DIR) + name, c);
    EXPECT_TRUE(errors.empty()) << name << ": " << (errors.empty() ? "" : errors.front());
  }
}

TEST(YamlConfig, UnknownKeyIsNamedWithItsLine) {
  LaunchConfig c;
  auto errors = apply_yaml("nodes: 2\nnprocs: 4\n", "job.yaml", c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("job.yaml:2"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("unknown key 'nprocs'"), std::string::npos) << errors[0];
  EXPECT_EQ(c.nodes, 1) << "a bad file must change nothing";
}

TEST(YamlConfig, NestedUnknownKeyAndBadValue) {
  LaunchConfig c;
  auto errors = apply_yaml("timeout:\n  base: 3\nrestart:\n  max_restarts: many\n", "f.yaml", c);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_TRUE(any_contains(errors, "unknown key 'timeout.base'"));
  EXPECT_TRUE(any_contains(errors, "f.yaml:4: bad value 'many' for 'restart.max_restarts'"));
}

TEST(YamlConfig, AppliesValuesOfEveryKind) {
  LaunchConfig c;
  auto errors = apply_yaml(
      "nodes: 4\nnproc_per_node: 8\nmaster: n1:29400\nstandalone: false\ngrace_s: 2.5\n"
      "pause_ranks: [0, 3]\nrestart:\n  restart_on: [init, runtime]\n  max_restarts: 1\ntimeout:\n  base_s: 60\n",
      "f", c);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.nproc_per_node, "8");
  EXPECT_EQ(c.master, "n1:29400");
  EXPECT_DOUBLE_EQ(c.grace_s, 2.5);
  EXPECT_EQ(c.pause_ranks, (std::vector<int>{0, 3}));
  EXPECT_TRUE(c.restart.on_runtime_failure);
  EXPECT_EQ(c.restart.max_restarts, 1);
  EXPECT_DOUBLE_EQ(c.timeout.base_s, 60);
}

TEST(YamlConfig, RejectsBadRestartOnEntryAndNonMapping) {
  LaunchConfig c;
  EXPECT_TRUE(any_contains(apply_yaml("restart:\n  restart_on: [boot]\n", "f", c), "restart_on"));
  EXPECT_TRUE(any_contains(apply_yaml("- 1\n- 2\n", "f", c), "top level must be a mapping"));
  EXPECT_TRUE(any_contains(apply_yaml("nodes: [1\n", "f", c), "not valid YAML"));
  EXPECT_TRUE(any_contains(apply_yaml_file("/nonexistent/x.yaml", c), "/nonexistent/x.yaml"));
}

TEST(CommandLine, FlagsBothSpellingsAndProgram) {
  auto cl = parse_command_line({"--nodes", "4", "--nproc-per-node=2", "--master", "h:1", "--standalone",
                                "train_binary", "--lr", "3"});
  ASSERT_TRUE(cl.errors.empty());
  EXPECT_EQ(cl.program, (std::vector<std::string>{"train_binary", "--lr", "3"}));
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "command line", c).empty());
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.nproc_per_node, "2");
  EXPECT_EQ(c.master, "h:1");
  EXPECT_TRUE(c.standalone);
}

TEST(CommandLine, TorchrunSpellingsAreAliases) {
  auto cl = parse_command_line({"--nnodes=2", "--nproc_per_node=4", "--node_rank=1", "--rdzv_endpoint=n1:29400",
                                "--max_restarts=2", "train.py"});
  ASSERT_TRUE(cl.errors.empty());
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "command line", c).empty());
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.nproc_per_node, "4");
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.master, "n1:29400");
  EXPECT_EQ(c.restart.max_restarts, 2);
  EXPECT_EQ(cl.program, (std::vector<std::string>{"train.py"}));
}

TEST(CommandLine, DoubleDashKeepsProgramFlags) {
  auto cl = parse_command_line({"--nodes", "1", "--", "python3", "--nodes", "9"});
  EXPECT_EQ(cl.program, (std::vector<std::string>{"python3", "--nodes", "9"}));
}

TEST(CommandLine, SubcommandsAndSet) {
  auto cl = parse_command_line({"doctor", "--set", "timeout.base_s=60", "--pause-ranks", "0,3"});
  EXPECT_EQ(cl.subcommand, Subcommand::Doctor);
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "command line", c).empty());
  EXPECT_DOUBLE_EQ(c.timeout.base_s, 60);
  EXPECT_EQ(c.pause_ranks, (std::vector<int>{0, 3}));
  EXPECT_EQ(parse_command_line({"status"}).subcommand, Subcommand::Status);
}

TEST(CommandLine, ErrorsNameTheProblem) {
  EXPECT_TRUE(any_contains(parse_command_line({"--bogus"}).errors, "unknown option '--bogus'"));
  EXPECT_TRUE(any_contains(parse_command_line({"--nodes"}).errors, "--nodes needs a value"));
  EXPECT_TRUE(any_contains(parse_command_line({"--set", "novalue"}).errors, "KEY=VALUE"));
  LaunchConfig c;
  auto errors = apply_settings({{"nodes", "four"}}, "command line", c);
  EXPECT_TRUE(any_contains(errors, "bad value 'four' for 'nodes'"));
}

TEST(Validate, NamesEachBadValue) {
  LaunchConfig c;
  c.program = {"p"};
  EXPECT_TRUE(validate(c).empty());
  c.nodes = 2;
  EXPECT_TRUE(any_contains(validate(c), "--master HOST:PORT"));
  c.master = "nohostport";
  EXPECT_TRUE(any_contains(validate(c), "not HOST:PORT"));
  c.master = "n1:29400";
  c.nproc_per_node = "0";
  c.worker_port = "70000";
  c.grace_s = -1;
  c.shim = "magic";
  c.timeout.min_s = 100;
  c.timeout.max_s = 10;
  auto errors = validate(c);
  EXPECT_TRUE(any_contains(errors, "nproc_per_node"));
  EXPECT_TRUE(any_contains(errors, "worker_port"));
  EXPECT_TRUE(any_contains(errors, "grace_s"));
  EXPECT_TRUE(any_contains(errors, "shim"));
  EXPECT_TRUE(any_contains(errors, "timeout"));
  LaunchConfig same_ports;
  same_ports.program = {"p"};
  same_ports.nodes = 2;
  same_ports.master = "n1:29400";
  same_ports.worker_port = "29400";
  EXPECT_TRUE(any_contains(validate(same_ports), "rendezvous port"));
  LaunchConfig no_program;
  EXPECT_TRUE(any_contains(validate(no_program), "no program to run"));
}

TEST(HostPort, ParsesNamesIPv4AndIPv6) {
  EXPECT_EQ(parse_host_port("node01:29400")->host, "node01");
  EXPECT_EQ(parse_host_port("[fe80::1]:7")->host, "fe80::1");
  EXPECT_EQ(parse_host_port("[fe80::1]:7")->port, 7);
  EXPECT_FALSE(parse_host_port("fe80::1:7").has_value());
  EXPECT_FALSE(parse_host_port("host:0").has_value());
  EXPECT_FALSE(parse_host_port(":80").has_value());
}

TEST(JobSetup, CommandLineOverridesYamlAndStandaloneIsInferred) {
  auto cl = parse_command_line({"--nproc-per-node", "3", "--", "prog"});
  auto setup = resolve_job_setup(cl, {});
  ASSERT_TRUE(setup.errors.empty()) << setup.errors.front();
  EXPECT_TRUE(setup.config.standalone);
  EXPECT_EQ(setup.config.nproc_per_node, "3");
  EXPECT_FALSE(setup.config.job_id.empty());
}

TEST(JobSetup, SlurmStepFillsUnsetKeysAndReportsConflicts) {
  Environment env{{"SLURM_JOB_ID", "77"},        {"SLURM_STEP_ID", "0"},      {"SLURM_NODEID", "1"},
                  {"SLURM_NNODES", "2"},         {"SLURM_STEP_NUM_NODES", "2"}, {"SLURM_STEP_NODELIST", "localhost,localhost"},
                  {"SLURM_JOB_NODELIST", "localhost"}};
  auto cl = parse_command_line({"--slurm", "--nproc-per-node", "1", "--node-rank", "1", "--", "prog"});
  auto setup = resolve_job_setup(cl, env);
  ASSERT_TRUE(setup.errors.empty()) << setup.errors.front();
  EXPECT_EQ(setup.config.nodes, 2);
  EXPECT_EQ(setup.config.node_rank, 1);
  EXPECT_EQ(setup.config.job_id, "77.0");
  EXPECT_EQ(setup.config.master.rfind("127.0.0.1:", 0), 0u) << setup.config.master;
  auto conflicting = parse_command_line({"--slurm", "--nodes", "3", "--", "prog"});
  auto with_conflict = resolve_job_setup(conflicting, env);
  EXPECT_EQ(with_conflict.config.nodes, 3);
  EXPECT_TRUE(any_contains(with_conflict.notes, "overrides slurm"));
}

TEST(JobSetup, SlurmFlagOutsideSlurmIsAnError) {
  auto setup = resolve_job_setup(parse_command_line({"--slurm", "--", "prog"}), {});
  EXPECT_TRUE(any_contains(setup.errors, "not inside a Slurm job step"));
}
