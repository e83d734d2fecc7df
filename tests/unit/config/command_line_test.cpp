// The command line as torchrun users type it: every torchrun flag in both spellings, PET_*
// fallbacks, refused capabilities, "did you mean", program resolution and --help.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "config/command_line.h"
#include "config/flag_names.h"
#include "config/option_table.h"
#include "config/job_setup.h"
#include "config/launch_config.h"
#include "config/program_command.h"
#include "config/yaml_config.h"

using namespace ddplaunch;

namespace {

using Env = std::map<std::string, std::string>;

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Parses and applies the settings onto a default config; fails the test on any error.
LaunchConfig config_of(const std::vector<std::string>& args, const Env& env = {}) {
  CommandLine cl = parse_command_line(args, env);
  EXPECT_TRUE(cl.errors.empty()) << joined(cl.errors);
  LaunchConfig c;
  auto errors = apply_settings(cl.settings, "command line", c);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  return c;
}

std::vector<std::string> errors_of(const std::vector<std::string>& args, const Env& env = {}) {
  return parse_command_line(args, env).errors;
}

}  // namespace

// etcd TLS and authentication: torchrun's etcd keys in --rdzv-conf.
TEST(CommandLineTorchrun, EtcdTlsAndAuthKeysOfRdzvConf) {
  const std::vector<std::string> etcd{"--rdzv-backend", "etcd", "--rdzv-endpoint", "e1:2379", "--rdzv-conf"};
  auto with_conf = [&](const std::string& conf) {
    auto args = etcd;
    args.push_back(conf);
    args.push_back("p");
    return args;
  };
  LaunchConfig c = config_of(with_conf("protocol=https,cacert=/c/ca.pem,cert=/c/n.pem,key=/c/n.key,username=job,"
                                       "password_file=/c/pw"));
  EXPECT_EQ(c.etcd.protocol, EtcdProtocol::Https);
  EXPECT_EQ(c.etcd.cacert, "/c/ca.pem");
  EXPECT_EQ(c.etcd.cert, "/c/n.pem");
  EXPECT_EQ(c.etcd.key, "/c/n.key");
  EXPECT_EQ(c.etcd.username, "job");
  EXPECT_EQ(c.etcd.password_file, "/c/pw");
  EXPECT_TRUE(c.etcd.password.empty());  // read by resolve_job_setup, never from the command line
  EXPECT_EQ(config_of(with_conf("protocol=http")).etcd.protocol, EtcdProtocol::Http);
  EXPECT_TRUE(any_contains(errors_of(with_conf("protocol=ftp")), "protocol=ftp is not http or https"));
  // password= would be visible in ps: refused, saying what to use, without echoing it.
  const auto refused = errors_of(with_conf("username=job,password=hunter2"));
  EXPECT_TRUE(any_contains(refused, "password= is refused")) << joined(refused);
  EXPECT_TRUE(any_contains(refused, "password_file=PATH")) << joined(refused);
  EXPECT_TRUE(any_contains(refused, "DDPLAUNCH_ETCD_PASSWORD")) << joined(refused);
  EXPECT_FALSE(any_contains(refused, "hunter2")) << joined(refused);
  EXPECT_TRUE(any_contains(errors_of(with_conf("bogus=1")), "protocol, cacert, cert, key, username, password_file"));
}

TEST(CommandLineTorchrun, EtcdPasswordComesFromItsFileOrTheEnvironment) {
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/ddplaunch-etcd-password-" + std::to_string(::getpid());
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("from-file\nnot this line\n", f);
    std::fclose(f);
  }
  auto setup_of = [](const std::string& conf, const Env& env) {
    return resolve_job_setup(
        parse_command_line({"--rdzv-backend", "etcd", "--rdzv-endpoint", "e1:2379", "--rdzv-id", "run-1", "--nnodes",
                            "2", "--rdzv-conf", conf, "p"},
                           env),
        env);
  };
  ::chmod(file.c_str(), 0644);  // others may read it: refused, saying how to fix it
  EXPECT_TRUE(any_contains(setup_of("username=job,password_file=" + file, {}).errors, "chmod 600"));
  ::chmod(file.c_str(), 0600);
  auto from_file = setup_of("username=job,password_file=" + file, {{"DDPLAUNCH_ETCD_PASSWORD", "from-env"}});
  EXPECT_TRUE(from_file.errors.empty()) << joined(from_file.errors);
  EXPECT_EQ(from_file.config.etcd.password, "from-file");  // the first line; the file wins
  auto from_env = setup_of("username=job", {{"DDPLAUNCH_ETCD_PASSWORD", "from-env"}});
  EXPECT_TRUE(from_env.errors.empty()) << joined(from_env.errors);
  EXPECT_EQ(from_env.config.etcd.password, "from-env");
  EXPECT_TRUE(any_contains(setup_of("username=job", {}).errors, "needs the etcd password"));
  EXPECT_TRUE(any_contains(setup_of("password_file=" + file, {}).errors, "without a user"));
  EXPECT_TRUE(any_contains(setup_of("username=job,password_file=" + dir + "/absent", {}).errors,
                           "--rdzv-conf password_file " + dir + "/absent: cannot open it"));
  std::remove(file.c_str());
}

TEST(CommandLineTorchrun, DashAndUnderscoreSpellingsMeanTheSame) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--nnodes=2", "--nproc-per-node=4", "--node-rank=1", "--rdzv-endpoint=n1:29400", "--max-restarts=2",
            "--rdzv-id=abc", "--log-dir=/tmp/l", "--shutdown-timeout=7", "train.py"},
           {"--nnodes", "2", "--nproc_per_node", "4", "--node_rank", "1", "--rdzv_endpoint", "n1:29400",
            "--max_restarts", "2", "--rdzv_id", "abc", "--log_dir", "/tmp/l", "--shutdown_timeout", "7", "train.py"}}) {
    LaunchConfig c = config_of(args);
    EXPECT_EQ(c.nodes, 2);
    EXPECT_EQ(c.nproc_per_node.count, 4);
    EXPECT_EQ(c.node_rank, 1);
    EXPECT_EQ(c.master, "n1:29400");
    EXPECT_EQ(c.restart.max_restarts, 2);
    EXPECT_EQ(c.job_id, "abc");
    EXPECT_EQ(c.log_dir, "/tmp/l");
    EXPECT_DOUBLE_EQ(c.grace_s, 7);
  }
}

TEST(CommandLineTorchrun, NnodesRangesAndBadValues) {
  EXPECT_EQ(config_of({"--nnodes", "3:3", "p"}).nodes, 3);
  LaunchConfig elastic = config_of({"--nnodes", "1:4", "--master", "h:1", "p"});  // torchrun's elastic range
  EXPECT_EQ(elastic.nodes, 4);
  EXPECT_EQ(elastic.membership.min_nodes, 1);
  EXPECT_TRUE(membership_enabled(elastic));
  LaunchConfig spares = config_of({"--nodes", "2", "--spares", "1", "--node-rank", "2", "--master", "h:1", "p"});
  EXPECT_EQ(spares.membership.spares, 1);
  EXPECT_EQ(spares.node_rank, 2);  // a rank at or above --nodes starts as a spare
  EXPECT_TRUE(any_contains(validate(config_of({"--nodes", "2", "--node-rank", "2", "--master", "h:1", "p"})),
                           "node_rank 2 is outside 0..1"));
  EXPECT_FALSE(any_contains(validate(spares), "node_rank"));
  EXPECT_TRUE(any_contains(errors_of({"--nodes", "2", "--spares", "-1", "--master", "h:1", "p"}), "--spares"));
  EXPECT_TRUE(any_contains(errors_of({"--nnodes", "4:1", "p"}), "minimum exceeds the maximum"));
  EXPECT_TRUE(any_contains(errors_of({"--nodes", "two", "p"}), "'two' is not a node count"));
  EXPECT_TRUE(any_contains(errors_of({"--nodes", "0", "p"}), "is not a node count"));
  EXPECT_TRUE(any_contains(errors_of({"--nodes", "1:2:3", "p"}), "is not a node count"));
}

TEST(CommandLineTorchrun, NprocWords) {
  for (const char* word : {"auto", "gpu", "cpu", "gpu-or-1", "8"})
    EXPECT_EQ(preflight::nproc_request_text(config_of({"--nproc_per_node", word, "p"}).nproc_per_node), word);
  EXPECT_TRUE(any_contains(errors_of({"--nproc-per-node", "many", "p"}), "auto (one per GPU, else per CPU), gpu, cpu, or gpu-or-1"));
}

TEST(CommandLineTorchrun, MasterAddrAndPortNameTheRendezvous) {
  CommandLine cl = parse_command_line({"--nnodes=2", "--node_rank=0", "--master_addr=10.0.0.1", "--master_port=29501", "t.py"}, {});
  ASSERT_TRUE(cl.errors.empty()) << joined(cl.errors);
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "cl", c).empty());
  EXPECT_EQ(c.master, "10.0.0.1:29501");
  EXPECT_TRUE(c.worker_port.automatic()) << "the workers' MASTER_PORT must differ from the rendezvous port";
  EXPECT_TRUE(any_contains(cl.notes, "MASTER_PORT"));
  EXPECT_EQ(config_of({"--master-port", "29600", "t.py"}).master, "127.0.0.1:29600");  // torchrun's default address
  EXPECT_EQ(config_of({"--master-addr", "fe80::1", "t.py"}).master, "[fe80::1]:29500");
  EXPECT_EQ(config_of({"--master-addr", "a", "--rdzv-endpoint", "b:1", "t.py"}).master, "b:1");  // endpoint wins
  EXPECT_EQ(config_of({"--rdzv-endpoint", "node01", "t.py"}).master, "node01:29400");  // torchrun's default port
  EXPECT_EQ(config_of({"--master", "h:7", "t.py"}).master, "h:7");
  EXPECT_TRUE(any_contains(errors_of({"--master-port", "0", "p"}), "is not a port"));
}

TEST(CommandLineTorchrun, RendezvousBackendIdConfAndStandalone) {
  EXPECT_TRUE(errors_of({"--rdzv-backend", "c10d", "p"}).empty());
  EXPECT_TRUE(errors_of({"--rdzv_backend=static", "p"}).empty());
  // etcd: the endpoint list is etcd's, the elected launcher hosts the rendezvous.
  EXPECT_TRUE(any_contains(errors_of({"--rdzv-backend", "etcd", "p"}), "needs --rdzv-endpoint"));
  LaunchConfig etcd = config_of({"--rdzv-backend", "etcd", "--rdzv-endpoint", "e1:2379,e2:2379", "--rdzv-conf",
                                 "lease_ttl=5,coordinator_port=0", "--nnodes", "3", "p"});
  EXPECT_EQ(etcd.etcd.endpoints, "e1:2379,e2:2379");
  EXPECT_TRUE(etcd.master.empty());  // no node 0 to name
  EXPECT_DOUBLE_EQ(etcd.etcd.lease_ttl_s, 5);
  EXPECT_EQ(etcd.etcd.coordinator_port, 0);
  EXPECT_TRUE(membership_enabled(etcd));
  EXPECT_EQ(config_of({"--rdzv-backend", "etcd-v2", "--rdzv-endpoint", "e1:2379", "p"}).etcd.endpoints, "e1:2379");
  EXPECT_TRUE(any_contains(errors_of({"--rdzv-backend", "zk", "p"}), "not a rendezvous backend"));
  LaunchConfig c = config_of({"--rdzv_conf", "join_timeout=900,read_timeout=7,keep_alive_interval=2,keep_alive_max_attempt=4", "p"});
  EXPECT_DOUBLE_EQ(c.join_timeout_s, 900);
  EXPECT_DOUBLE_EQ(c.connect_timeout_s, 7);
  EXPECT_DOUBLE_EQ(c.heartbeat_interval_s, 2);
  EXPECT_DOUBLE_EQ(c.heartbeat_timeout_s, 8);
  EXPECT_DOUBLE_EQ(config_of({"--rdzv-conf", "timeout=60", "p"}).join_timeout_s, 60);
  // torchrun's last call: after MIN joined, how long to wait for more (membership.last_call_s).
  EXPECT_DOUBLE_EQ(config_of({"--rdzv-conf", "last_call_timeout=5", "p"}).membership.last_call_s, 5);
  EXPECT_TRUE(any_contains(parse_command_line({"--rdzv-conf", "close_timeout=5", "p"}, {}).notes, "no effect"));
  EXPECT_TRUE(any_contains(errors_of({"--rdzv-conf", "bogus=1", "p"}), "unknown key 'bogus'"));
  EXPECT_TRUE(any_contains(errors_of({"--rdzv-conf", "join_timeout=soon", "p"}), "not a number of seconds"));
  EXPECT_TRUE(config_of({"--standalone", "p"}).standalone);
  EXPECT_EQ(config_of({"--role", "trainer", "p"}).role, "trainer");
}

TEST(CommandLineTorchrun, AcceptedFlagsWithoutEffectSayWhy) {
  CommandLine cl = parse_command_line({"--monitor-interval", "5", "--start_method", "fork", "-r", "3", "-t", "0:1,1:2",
                                       "--local-addr", "10.0.0.2", "--signals-to-handle", "SIGTERM,SIGINT", "p"}, {});
  EXPECT_TRUE(cl.errors.empty()) << joined(cl.errors);
  EXPECT_TRUE(any_contains(cl.notes, "--monitor-interval is not needed"));
  EXPECT_TRUE(any_contains(cl.notes, "--local-addr"));
  EXPECT_TRUE(errors_of({"-r3", "-t", "1", "p"}).empty());
  EXPECT_TRUE(any_contains(errors_of({"--start-method", "thread", "p"}), "spawn, fork or forkserver"));
  EXPECT_TRUE(any_contains(errors_of({"-r", "5", "p"}), "0..3"));
  EXPECT_TRUE(any_contains(errors_of({"--tee", "0:7", "p"}), "0..3"));
  EXPECT_TRUE(errors_of({"--signals-to-handle", "SIGTERM,SIGUSR1,SIGUSR2", "p"}).empty());  // forwarded
  EXPECT_TRUE(any_contains(errors_of({"--signals-to-handle", "SIGALRM", "p"}), "is not supported"));
}

TEST(CommandLineTorchrun, PlacementAndStreamFlagsReachTheConfig) {
  LaunchConfig c = config_of({"--numa-binding", "core_complex", "--virtual-local-rank", "-r", "2", "--tee", "0:1", "p"});
  EXPECT_EQ(c.numa_binding, placement::BindingMode::CoreComplex);
  EXPECT_TRUE(c.virtual_local_rank);
  EXPECT_EQ(stream_spec_text(c.redirects), "2");
  EXPECT_EQ(stream_spec_text(c.tee), "0:1");
  EXPECT_EQ(config_of({"--numa-binding=socket", "p"}).numa_binding, placement::BindingMode::Socket);
  EXPECT_FALSE(config_of({"p"}).virtual_local_rank);
  EXPECT_TRUE(any_contains(errors_of({"--numa-binding", "numa", "p"}), "not node, socket, exclusive or core-complex"));
  EXPECT_EQ(config_of({"--numa-binding", "node", "p"}).numa_binding, placement::BindingMode::Node);
}

TEST(CommandLineTorchrun, LocalRanksFilterAndRestarts) {
  LaunchConfig c = config_of({"--local-ranks-filter", "0,3", "--init-restarts", "5", "--max-restarts", "1", "p"});
  EXPECT_EQ(c.local_ranks_filter, (std::vector<int>{0, 3}));
  EXPECT_EQ(c.restart.init_restarts, 5);
  EXPECT_EQ(c.restart.max_restarts, 1);
  EXPECT_TRUE(any_contains(errors_of({"--local-ranks-filter", "x", "p"}), "comma list of local ranks"));
  EXPECT_TRUE(any_contains(errors_of({"--max-restarts", "-1", "p"}), "whole number >= 0"));
}

TEST(CommandLineTorchrun, ProgramModes) {
  EXPECT_EQ(parse_command_line({"-m", "pkg.mod", "--x"}, {}).program_mode, ProgramMode::Module);
  EXPECT_EQ(parse_command_line({"-m", "pkg.mod", "--x"}, {}).program, (std::vector<std::string>{"pkg.mod", "--x"}));
  EXPECT_EQ(parse_command_line({"--module", "pkg.mod"}, {}).program_mode, ProgramMode::Module);
  EXPECT_EQ(parse_command_line({"--no_python", "/bin/sh"}, {}).program_mode, ProgramMode::NoPython);
  EXPECT_EQ(parse_command_line({"--no-python", "/bin/sh"}, {}).program_mode, ProgramMode::NoPython);
  EXPECT_EQ(parse_command_line({"--no-python", "--run-path", "/a.py"}, {}).program_mode, ProgramMode::RunPath);
  EXPECT_TRUE(any_contains(errors_of({"-m", "--no-python", "x"}), "cannot be combined"));
  EXPECT_EQ(parse_command_line({"--python", "/opt/py", "t.py"}, {}).python, "/opt/py");
}

// A Kubeflow PyTorchJob pod: the operator sets torchrun's PET_ variables, which ddplaunch reads
// as torchrun does, through the option rows of the flags they stand for.
TEST(CommandLineEnvironment, AKubeflowPyTorchJobsVariablesReachTheConfig) {
  const LaunchConfig fixed = config_of({"p"}, {{"PET_NNODES", "3"},
                                               {"PET_NODE_RANK", "2"},
                                               {"PET_MASTER_ADDR", "job-master-0"},
                                               {"PET_MASTER_PORT", "23456"},
                                               {"PET_NPROC_PER_NODE", "4"}});
  EXPECT_EQ(fixed.nodes, 3);
  EXPECT_EQ(fixed.node_rank, 2);
  EXPECT_EQ(fixed.master, "job-master-0:23456");
  EXPECT_EQ(fixed.nproc_per_node.count, 4);
  EXPECT_TRUE(fixed.worker_port.automatic()) << "the operator opens no second port: the master picks one";
  EXPECT_FALSE(any_contains(validate(fixed), "node_rank")) << joined(validate(fixed));
  const LaunchConfig elastic = config_of({"p"}, {{"PET_NNODES", "2:4"},
                                                 {"PET_RDZV_ENDPOINT", "job-master-0:29400"},
                                                 {"PET_NPROC_PER_NODE", "auto"},
                                                 {"PET_RDZV_ID", "job-42"}});
  EXPECT_EQ(elastic.nodes, 4);
  EXPECT_EQ(elastic.membership.min_nodes, 2);
  EXPECT_EQ(elastic.master, "job-master-0:29400");
  EXPECT_FALSE(elastic.nproc_per_node.count.has_value());
  EXPECT_EQ(elastic.nproc_per_node.word, preflight::NprocWord::Auto) << "counted on the node";
  EXPECT_EQ(elastic.job_id, "job-42");
}

TEST(CommandLineEnvironment, AKubeflowVariableThatIsNotValidIsNamedWithItsValue) {
  const Env pod{{"PET_NNODES", "2"}, {"PET_NODE_RANK", "0"}, {"PET_MASTER_ADDR", "m"}, {"PET_MASTER_PORT", "23456"}};
  const std::pair<const char*, const char*> bad[] = {
      {"PET_NNODES", "4:2"},       {"PET_NNODES", "x"},           {"PET_NNODES", "1:x"},
      {"PET_MASTER_PORT", "70000"}, {"PET_MASTER_PORT", "0"},       {"PET_NPROC_PER_NODE", "four"},
      {"PET_NPROC_PER_NODE", "0"}};
  for (const auto& [name, value] : bad) {
    Env env = pod;
    env[name] = value;
    const std::string said = std::string(name) + "=" + value;
    EXPECT_TRUE(any_contains(errors_of({"p"}, env), said)) << said << ": " << joined(errors_of({"p"}, env));
  }
  Env beyond = pod;
  beyond["PET_NODE_RANK"] = "2";
  const auto problems = validate(config_of({"p"}, beyond));
  EXPECT_TRUE(any_contains(problems, "node_rank 2 is outside 0..1")) << joined(problems);
}

TEST(CommandLineEnvironment, PetVariablesFillFlagsAndFlagsWin) {
  Env env{{"PET_NNODES", "2"},          {"PET_NODE_RANK", "1"},       {"PET_MASTER_ADDR", "10.1.0.5"},
          {"PET_MASTER_PORT", "23456"}, {"PET_NPROC_PER_NODE", "4"}, {"PET_RDZV_ID", "job7"},
          {"PET_MAX_RESTARTS", "3"},    {"PET_STANDALONE", "0"},     {"PET_NO_PYTHON", "1"}};
  CommandLine cl = parse_command_line({"--nproc-per-node", "2", "prog"}, env);
  ASSERT_TRUE(cl.errors.empty()) << joined(cl.errors);
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "cl", c).empty());
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.master, "10.1.0.5:23456");
  EXPECT_EQ(c.nproc_per_node.count, 2) << "a flag wins over PET_NPROC_PER_NODE";
  EXPECT_EQ(c.job_id, "job7");
  EXPECT_EQ(c.restart.max_restarts, 3);
  EXPECT_FALSE(c.standalone);
  EXPECT_EQ(cl.program_mode, ProgramMode::NoPython);
  EXPECT_TRUE(any_contains(cl.notes, "overrides PET_NPROC_PER_NODE=4"));
  EXPECT_TRUE(any_contains(cl.notes, "PET_NNODES=2 from the environment"));
  // --set on the command line also wins over a PET_ value.
  EXPECT_EQ(config_of({"--set", "nodes=5", "p"}, {{"PET_NNODES", "2"}}).nodes, 5);
  // A PET_ value is checked exactly like its flag, and named in the message.
  EXPECT_TRUE(any_contains(errors_of({"p"}, {{"PET_NNODES", "4:1"}}), "PET_NNODES=4:1"));
  EXPECT_EQ(config_of({"p"}, {{"PET_NNODES", "1:4"}}).membership.min_nodes, 1);  // elastic, as torchrun
  EXPECT_TRUE(any_contains(errors_of({"p"}, {{"PET_RDZV_BACKEND", "zk"}}), "PET_RDZV_BACKEND=zk"));
  EXPECT_TRUE(any_contains(errors_of({"p"}, {{"PET_RDZV_BACKEND", "etcd"}}), "PET_RDZV_BACKEND=etcd needs"));
  // Every torchrun flag of the table has its PET_ variable.
  for (const OptionSpec& flag : flag_table())
    if (!flag.pet.empty()) {
      std::string expected = "PET_" + primary_name(flag);
      for (char& ch : expected) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (primary_name(flag) == "module") expected = "PET_MODULE";
      EXPECT_EQ(flag.pet, expected) << primary_name(flag);
    }
}

TEST(CommandLine, FlagsBothSpellingsAndProgram) {
  auto cl = parse_command_line({"--nodes", "4", "--nproc-per-node=2", "--master", "h:1", "--standalone",
                                "train_binary", "--lr", "3"});
  ASSERT_TRUE(cl.errors.empty());
  EXPECT_EQ(cl.program, (std::vector<std::string>{"train_binary", "--lr", "3"}));
  LaunchConfig c;
  ASSERT_TRUE(apply_settings(cl.settings, "command line", c).empty());
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.nproc_per_node.count, 2);
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
  EXPECT_EQ(c.nproc_per_node.count, 4);
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
  EXPECT_DOUBLE_EQ(c.init_deadline.base_s, 60);
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

TEST(CommandLine, DidYouMean) {
  EXPECT_TRUE(any_contains(errors_of({"--nproc-per-nodd", "2", "p"}), "did you mean --nproc-per-node?"));
  EXPECT_TRUE(any_contains(errors_of({"--max_restrats=2", "p"}), "did you mean --max-restarts?"));
  EXPECT_TRUE(any_contains(errors_of({"--standalnoe", "p"}), "did you mean --standalone?"));
  auto far = errors_of({"--zzzzzzzzzzzz", "p"});
  ASSERT_EQ(far.size(), 1u);
  EXPECT_EQ(far[0].find("did you mean"), std::string::npos) << far[0];
}

// argparse (torchrun) takes any unambiguous prefix of a long option; so does ddplaunch.
TEST(CommandLine, UnambiguousPrefixesOfLongFlagsAreAccepted) {
  EXPECT_TRUE(errors_of({"--redirect=3", "--log_dir", "/tmp", "p"}).empty());
  EXPECT_TRUE(errors_of({"--max_restart=2", "p"}).empty());
  EXPECT_TRUE(errors_of({"--nproc-per-nod", "2", "p"}).empty());
  EXPECT_EQ(config_of({"--max_restart=2", "p"}).restart.max_restarts, 2);
  EXPECT_EQ(config_of({"--nproc_per", "3", "p"}).nproc_per_node.count, 3);
}

TEST(CommandLine, AnAmbiguousPrefixNamesEveryCandidate) {
  auto errors = errors_of({"--ma", "2", "p"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("ambiguous option '--ma'"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("--max-restarts"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("--master"), std::string::npos) << errors[0];
}

TEST(CommandLine, SetTakesYamlListForm) {
  LaunchConfig c = config_of({"--set", "restart.restart_on=[init]", "p"});
  EXPECT_TRUE(c.restart.on_init_failure);
  EXPECT_FALSE(c.restart.on_runtime_failure);
  c = config_of({"--set", "restart.restart_on=[init, runtime]", "--set", "pause_ranks=[1,2]", "p"});
  EXPECT_TRUE(c.restart.on_runtime_failure);
  EXPECT_EQ(c.pause_ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(config_of({"--set", "restart.init_restarts=0", "p"}).restart.init_restarts, 0);
}

TEST(CommandLine, HelpListsEveryFlagAndTheContract) {
  std::string help = usage_text();
  for (const OptionSpec& flag : flag_table())
    for (const auto& spelling : spellings(flag)) EXPECT_NE(help.find(spelling), std::string::npos) << spelling;
  for (const char* text : {"DDPLAUNCH_TIMEOUT_S", "NOT applied to init_process_group", "MASTER_PORT", "LOCAL_RANK",
                           "Exit status", "doctor", "status", "PET_NNODES", "TORCHRUN-COMPAT.md", "Placement"})
    EXPECT_NE(help.find(text), std::string::npos) << text;
  EXPECT_TRUE(parse_command_line({"-h"}, {}).help);
  EXPECT_TRUE(parse_command_line({"--help"}, {}).help);
}

namespace {
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ddplaunch_cl_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  std::string file(const std::string& name, bool executable) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n";
    chmod(p.c_str(), executable ? 0755 : 0644);
    return p;
  }
};
}  // namespace

TEST(ProgramCommand, ScriptsGetPythonExecutablesRunAsIs) {
  TempDir dir;
  const std::string py = "/opt/py";
  using V = std::vector<std::string>;
  EXPECT_EQ(program_command(ProgramMode::Auto, {"train.py", "--lr", "3"}, py), (V{py, "-u", "train.py", "--lr", "3"}));
  std::string script = dir.file("train", false);  // not executable: torchrun's `python train`
  EXPECT_EQ(program_command(ProgramMode::Auto, {script}, py), (V{py, "-u", script}));
  std::string binary = dir.file("train_binary", true);
  EXPECT_EQ(program_command(ProgramMode::Auto, {binary, "x"}, py), (V{binary, "x"}));
  std::string exec_py = dir.file("exec.py", true);  // .py runs under python even when executable, as torchrun
  EXPECT_EQ(program_command(ProgramMode::Auto, {exec_py}, py), (V{py, "-u", exec_py}));
  EXPECT_EQ(program_command(ProgramMode::Auto, {"/usr/bin/python3", "x.py"}, py), (V{"/usr/bin/python3", "x.py"}));
  EXPECT_EQ(program_command(ProgramMode::Auto, {"sh", "-c", "true"}, py), (V{"sh", "-c", "true"}));  // on PATH
  EXPECT_EQ(program_command(ProgramMode::Module, {"pkg.mod", "a"}, py), (V{py, "-u", "-m", "pkg.mod", "a"}));
  EXPECT_EQ(program_command(ProgramMode::NoPython, {"train.py"}, py), (V{"train.py"}));
  EXPECT_EQ(program_command(ProgramMode::RunPath, {"/abs/t.py"}, py), (V{py, "-u", "/abs/t.py"}));
  EXPECT_TRUE(program_command(ProgramMode::Auto, {}, py).empty());
}

TEST(ProgramCommand, InterpreterChoice) {
  EXPECT_EQ(python_interpreter("/x/python", {{"PYTHON_EXEC", "/y/python"}}), "/x/python");
  EXPECT_EQ(python_interpreter("", {{"PYTHON_EXEC", "/y/python"}}), "/y/python");
  std::string fallback = python_interpreter("", {});
  EXPECT_TRUE(fallback == "/usr/bin/python3" || fallback == "python3") << fallback;
}

TEST(ProgramCommand, JobSetupResolvesTheProgram) {
  auto setup = resolve_job_setup(parse_command_line({"--standalone", "train.py", "--epochs", "1"}, {}),
                                 {{"PYTHON_EXEC", "/opt/py"}});
  ASSERT_TRUE(setup.errors.empty()) << joined(setup.errors);
  EXPECT_EQ(setup.config.program, (std::vector<std::string>{"/opt/py", "-u", "train.py", "--epochs", "1"}));
  auto with_notes = resolve_job_setup(parse_command_line({"--monitor-interval", "1", "--", "/bin/true"}, {}), {});
  EXPECT_TRUE(any_contains(with_notes.notes, "--monitor-interval")) << "parser notes reach the user";
}
