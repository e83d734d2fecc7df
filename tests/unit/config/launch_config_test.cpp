// LaunchConfig from YAML and the command line: defaults documented in configs/default.yaml,
// unknown keys and bad values named with their line, CLI overriding YAML, validation.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "config/command_line.h"
#include "config/job_setup.h"
#include "config/launch_config.h"
#include "config/token_source.h"
#include "config/yaml_config.h"

using namespace ddplaunch;

namespace {
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
  EXPECT_EQ(c.nproc_per_node.count, 8);
  EXPECT_EQ(c.master, "n1:29400");
  EXPECT_DOUBLE_EQ(c.grace_s, 2.5);
  EXPECT_EQ(c.pause_ranks, (std::vector<int>{0, 3}));
  EXPECT_TRUE(c.restart.on_runtime_failure);
  EXPECT_EQ(c.restart.max_restarts, 1);
  EXPECT_DOUBLE_EQ(c.init_deadline.base_s, 60);
}

TEST(YamlConfig, TheHistoryFileIsThePathGivenTheDefaultOrOff) {
  LaunchConfig by_default;
  EXPECT_FALSE(by_default.history_file.off);
  EXPECT_EQ(by_default.history_file.path, "");
  LaunchConfig off;
  auto errors = apply_yaml("hang:\n  history_file: off\n", "f", off);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_TRUE(off.history_file.off);
  EXPECT_EQ(off.history_file.path, "");
  LaunchConfig elsewhere = off;
  errors = apply_yaml("hang:\n  history_file: /var/tmp/runs\n", "f", elsewhere);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_FALSE(elsewhere.history_file.off) << "a path given after off turns the history on again";
  EXPECT_EQ(elsewhere.history_file.path, "/var/tmp/runs");
  LaunchConfig back;
  errors = apply_yaml("hang:\n  history_file: \"\"\n", "f", back);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_FALSE(back.history_file.off);
  EXPECT_EQ(back.history_file.path, "");
}

TEST(YamlConfig, StreamSpecsAreTorchrunsFormsAndOthersAreRefusedWithTheirLine) {
  LaunchConfig c;
  auto errors = apply_yaml("redirects: 3\ntee: \"0:1,1:2\"\n", "f", c);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(c.redirects.every_rank, 3);
  EXPECT_EQ(c.tee.streams_for(1), 2);
  LaunchConfig bad;
  errors = apply_yaml("nodes: 1\nredirects: 4\n", "f", bad);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(any_contains(errors, "f:2: bad value '4' for 'redirects'")) << errors.front();
  EXPECT_TRUE(any_contains(errors, "LOCAL_RANK:0..3")) << errors.front();
  EXPECT_FALSE(bad.redirects.given());
}

TEST(YamlConfig, RejectsBadRestartOnEntryAndNonMapping) {
  LaunchConfig c;
  EXPECT_TRUE(any_contains(apply_yaml("restart:\n  restart_on: [boot]\n", "f", c), "restart_on"));
  EXPECT_TRUE(any_contains(apply_yaml("- 1\n- 2\n", "f", c), "top level must be a mapping"));
  EXPECT_TRUE(any_contains(apply_yaml("nodes: [1\n", "f", c), "not valid YAML"));
  EXPECT_TRUE(any_contains(apply_yaml_file("/nonexistent/x.yaml", c), "/nonexistent/x.yaml"));
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
  c.nproc_per_node.count = 0;
  c.grace_s = -1;
  c.init_deadline.min_s = 100;
  c.init_deadline.max_s = 10;
  auto errors = validate(c);
  EXPECT_TRUE(any_contains(errors, "nproc_per_node"));
  EXPECT_TRUE(any_contains(errors, "grace_s"));
  EXPECT_TRUE(any_contains(errors, "timeout"));
  // Values with a few choices are checked where they are read, whatever the source.
  LaunchConfig choices;
  errors = apply_settings({{"worker_port", "70000"}, {"shim", "magic"}, {"hang.action", "pray"}}, "--set", choices);
  EXPECT_TRUE(any_contains(errors, "bad value '70000' for 'worker_port': must be auto or 1..65535"));
  EXPECT_TRUE(any_contains(errors, "bad value 'magic' for 'shim': must be auto, preload, python or none"));
  EXPECT_TRUE(any_contains(errors, "'hang.action': must be report, restart, stop or auto"));
  LaunchConfig same_ports;
  same_ports.program = {"p"};
  same_ports.nodes = 2;
  same_ports.master = "n1:29400";
  same_ports.worker_port.fixed = 29400;
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
  EXPECT_EQ(setup.config.nproc_per_node.count, 3);
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

// ---- ranges, duplicate keys, config paths, tokens --------------------------------------------

TEST(ValueRanges, ADurationFlagOutOfRangeNamesTheRangeAndTheYamlKey) {
  auto errors = parse_command_line({"--heartbeat-interval", "0.0001", "p"}).errors;
  EXPECT_TRUE(any_contains(errors, "--heartbeat-interval 0.0001 is out of range: allowed 0.05 to 60 seconds (YAML: "
                                   "heartbeat_interval_s)"))
      << (errors.empty() ? "" : errors.front());
  for (const char* absurd : {"1e300", "inf", "nan", "1e999"}) {
    EXPECT_TRUE(any_contains(parse_command_line({"--join-timeout", absurd, "p"}).errors, "--join-timeout")) << absurd;
    EXPECT_TRUE(any_contains(parse_command_line({"--heartbeat-timeout", absurd, "p"}).errors, "allowed 0.1 to 86400"))
        << absurd;
  }
  EXPECT_TRUE(parse_command_line({"--join-timeout", "900", "--heartbeat-interval", "0.2", "p"}).errors.empty());
}

TEST(ValueRanges, YamlSetAndTorchrunVariablesAreCheckedAlike) {
  LaunchConfig c;
  auto yaml = apply_yaml("nodes: 2\njoin_timeout_s: .inf\ntimeout:\n  base_s: -1\n", "job.yaml", c);
  EXPECT_TRUE(any_contains(yaml, "job.yaml:2: join_timeout_s .inf is out of range: allowed 0.1 to 604800 seconds "
                                 "(flag: --join-timeout)"))
      << (yaml.empty() ? "" : yaml.front());
  EXPECT_TRUE(any_contains(yaml, "job.yaml:4: timeout.base_s -1 is out of range"));
  EXPECT_EQ(c.nodes, 1);  // a bad file changes nothing
  auto set = apply_settings({{"restart.jitter", "2"}}, "command line", c);
  EXPECT_TRUE(any_contains(set, "restart.jitter 2 is out of range: allowed 0 to 1"));
  auto pet = parse_command_line({"p"}, {{"PET_NNODES", "100000"}}).errors;
  EXPECT_TRUE(any_contains(pet, "PET_NNODES 100000 is out of range: allowed 1 to 65536")) << (pet.empty() ? "" : pet.front());
  auto conf = parse_command_line({"--rdzv-conf", "join_timeout=inf", "p"}).errors;
  EXPECT_TRUE(any_contains(conf, "--rdzv-conf join_timeout inf is out of range: allowed 0.1 to 604800 seconds"))
      << (conf.empty() ? "" : conf.front());
}

TEST(ValueRanges, IntegerKeysHaveRangesToo) {
  auto nproc = parse_command_line({"--nproc-per-node", "100000", "p"}).errors;
  EXPECT_TRUE(any_contains(nproc, "--nproc-per-node 100000 is out of range: allowed 1 to 1024"))
      << (nproc.empty() ? "" : nproc.front());
  EXPECT_TRUE(parse_command_line({"--nproc-per-node", "1024", "p"}).errors.empty());
  EXPECT_TRUE(any_contains(parse_command_line({"--max-restarts", "99999999", "p"}).errors, "allowed 0 to 10000"));
  LaunchConfig c;
  EXPECT_TRUE(any_contains(apply_yaml("nproc_per_node: 100000\n", "f", c), "allowed 1 to 1024"));
  EXPECT_TRUE(apply_yaml("nproc_per_node: auto\n", "f", c).empty());
}

TEST(YamlConfig, ADuplicateKeyIsAnErrorNamingBothLines) {
  LaunchConfig c;
  auto errors = apply_yaml("nodes: 2\nrole: a\nnodes: 3\nrestart:\n  backoff_s: 1\n  backoff_s: 2\n", "job.yaml", c);
  EXPECT_TRUE(any_contains(errors, "job.yaml:3: key 'nodes' is given twice (first at line 1)"))
      << (errors.empty() ? "" : errors.front());
  EXPECT_TRUE(any_contains(errors, "job.yaml:6: key 'restart.backoff_s' is given twice (first at line 5)"));
  EXPECT_EQ(c.nodes, 1);
}

TEST(YamlConfig, ADirectoryAsConfigIsAnError) {
  LaunchConfig c;
  auto errors = apply_yaml_file(testing::TempDir(), c);
  EXPECT_TRUE(any_contains(errors, "is a directory, not a YAML file")) << (errors.empty() ? "" : errors.front());
}

namespace {
// A token file in a fresh temporary directory, with `mode`.
std::string token_file(const std::string& name, const std::string& content, mode_t mode) {
  std::string path = testing::TempDir() + "/token_test_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << content;
  chmod(path.c_str(), mode);
  return path;
}
}  // namespace

TEST(TokenSource, ATokenFileOwnedAndPrivateIsReadWithoutItsNewline) {
  std::string path = token_file("good", "s3cret-token\n", 0600);
  auto setup = resolve_job_setup(parse_command_line({"--token-file", path, "--", "prog"}), {{"DDPLAUNCH_TOKEN", "env"}});
  ASSERT_TRUE(setup.errors.empty()) << setup.errors.front();
  EXPECT_EQ(setup.config.token, "s3cret-token");
  EXPECT_EQ(read_token_file(token_file("ro", "t", 0400)).token, "t");
  std::remove(path.c_str());
}

TEST(TokenSource, ABadTokenFileIsRefusedSayingWhy) {
  EXPECT_NE(read_token_file(token_file("open", "t\n", 0644)).error.find("chmod 600"), std::string::npos);
  EXPECT_NE(read_token_file(token_file("group", "t\n", 0640)).error.find("mode 0640"), std::string::npos);
  EXPECT_NE(read_token_file(token_file("empty", "\n", 0600)).error.find("it is empty"), std::string::npos);
  EXPECT_NE(read_token_file(testing::TempDir()).error.find("not a regular file"), std::string::npos);
  EXPECT_NE(read_token_file("/nonexistent/token").error.find("cannot open it"), std::string::npos);
  if (geteuid() == 0) {  // a file of another user: root can make one
    std::string path = token_file("foreign", "t\n", 0600);
    ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
    EXPECT_NE(read_token_file(path).error.find("not by you"), std::string::npos) << read_token_file(path).error;
  }
  auto both = resolve_job_setup(
      parse_command_line({"--token", "x", "--token-file", token_file("both", "t", 0600), "--", "prog"}), {});
  EXPECT_TRUE(any_contains(both.errors, "keep one"));
}

TEST(TokenSource, TokenValuesAreScrubbedFromArgvUpToTheProgram) {
  std::vector<std::string> words = {"ddplaunch", "--token", "alpha", "--token=beta", "--set", "token=gamma",
                                    "--set", "role=x", "--set=token=delta", "--", "prog", "--token", "mine"};
  std::vector<std::vector<char>> storage;
  std::vector<char*> argv;
  for (const auto& w : words) storage.emplace_back(w.begin(), w.end()), storage.back().push_back('\0');
  for (auto& s : storage) argv.push_back(s.data());
  scrub_token_arguments(static_cast<int>(argv.size()), argv.data());
  std::vector<std::string> after(argv.begin(), argv.end());
  EXPECT_EQ(after[2], "*****");
  EXPECT_EQ(after[3], "--token=****");
  EXPECT_EQ(after[5], "token=*****");
  EXPECT_EQ(after[7], "role=x");
  EXPECT_EQ(after[8], "--set=token=*****");
  EXPECT_EQ(after[12], "mine");  // the program's own arguments are its business
}

// Weak tokens: a short or repetitive one is warned about
// (naming how to make a good one); a random 32-hex-digit one is not.
TEST(TokenSource, AWeakTokenIsWarnedAboutAndAStrongOneIsNot) {
  EXPECT_NE(token_weakness("s3cret").find("only 6 characters"), std::string::npos) << token_weakness("s3cret");
  EXPECT_NE(token_weakness("aaaaaaaaaaaaaaaaaaaa").find("only 1 different characters"), std::string::npos);
  EXPECT_NE(token_weakness("s3cret").find("openssl rand -hex 16"), std::string::npos);
  EXPECT_EQ(token_weakness("9f86d081884c7d659a2feaa0c55ad015"), "");
  EXPECT_EQ(token_weakness(""), "") << "no token: the launcher's own no-token warning applies";
  // Through the whole setup: a warning, not an error.
  CommandLine cl = parse_command_line({"--nodes", "2", "--master", "127.0.0.1:29400", "--token", "s3cret", "prog"});
  JobSetup setup = resolve_job_setup(cl, {});
  EXPECT_TRUE(setup.errors.empty());
  ASSERT_EQ(setup.warnings.size(), 1u);
  EXPECT_NE(setup.warnings[0].find("rendezvous token is weak"), std::string::npos) << setup.warnings[0];
}
