// What a fan-out runs on each host, as words: the ssh command around it (the user's ssh, with
// its config, plus the options a launcher needs), and the remote ddplaunch's command line.
// Pure: no processes, no environment reads beyond the maps passed in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/base/result.h"
#include "ddplaunch/cluster/host_selection.h"
#include "env/worker_environment.h"

namespace ddplaunch::fanout {

// `text` as one word of a POSIX shell: bare when it has only safe characters, else in single
// quotes (a ' inside becomes '\'').
std::string shell_quote(std::string_view text);
std::string shell_words(const std::vector<std::string>& words);

struct SshCommand {
  std::vector<std::string> words;  // $DDPLAUNCH_SSH split on blanks, else {"ssh"}
  int connect_timeout_s = 10;
  std::string error;               // DDPLAUNCH_SSH set but blank
};
SshCommand ssh_command(const Environment& env, double connect_timeout_s);

// ssh [the user's words] -o BatchMode=yes -o ConnectTimeout=N -o ServerAlive... HOST COMMAND.
// Options given on the command line win over ~/.ssh/config (ssh takes the first value it
// sees), so a password prompt can never hang the fan-out; everything else of the user's
// config (User, Port, IdentityFile, ProxyJump, HostName aliases) applies.
std::vector<std::string> ssh_argv(const SshCommand& ssh, const std::string& host, const std::string& remote_command);

// The variables a remote ddplaunch should see as they are here: NCCL_*, GLOO_*, TORCH_*,
// TORCHELASTIC_*, PYTHON*, OMP_*, PET_* and DDPLAUNCH_* (an ssh session starts with a bare
// environment), less what the fan-out decides itself (the token, the node's rank and
// count, the master) and DDPLAUNCH_SSH.
std::vector<std::pair<std::string, std::string>> forwarded_environment(const Environment& env);

// The user's own variables for every node: --env-file's VAR=VALUE lines (blank lines and #
// comments skipped, an `export ` prefix allowed), then each -x VAR (its value here) or
// -x VAR=VALUE; a later one wins. An error names the file and line, or the -x, and the fix:
// a bad name, a VAR unset here, or one of the fan-out's own variables.
Result<std::vector<std::pair<std::string, std::string>>> user_environment(const std::vector<std::string>& exported,
                                                                          std::string_view env_file_text,
                                                                          const std::string& env_file_name,
                                                                          const Environment& env);
// `forwarded` with the user's variables added; the user's win.
std::vector<std::pair<std::string, std::string>> with_user_environment(
    std::vector<std::pair<std::string, std::string>> forwarded,
    const std::vector<std::pair<std::string, std::string>>& user);

// The options of this command line that every node gets unchanged: all but the fan-out's
// own, the ones it sets per node (--nnodes, --node-rank, --rdzv-endpoint/--master and
// torchrun's --master-addr/--master-port, --standalone, --slurm), the token flags (the
// token goes over stdin) and, when the host's slots decide it, --nproc-per-node.
// `options` are CommandLine::options ("--primary-name[=value]").
std::vector<std::string> forwarded_options(const std::vector<std::string>& options, bool host_sets_nproc);

struct NodeLaunch {
  int node_rank = 0;
  int node_count = 1;
  std::string master;                    // HOST:PORT of node 0's rendezvous
  std::string launcher;                  // the ddplaunch to run there (path found by the checks)
  std::string subcommand;                // "" (run) or "doctor"
  std::string cwd;                       // this terminal's directory, entered on the host first
  cluster::FanoutHost host;
  std::vector<std::pair<std::string, std::string>> env;  // with_user_environment: sent on stdin, never in argv
  std::vector<std::string> options;      // forwarded_options (before the per-node ones)
  std::vector<std::string> program;      // PROGRAM [ARGS...] as typed
};

// What the node's ddplaunch gets on stdin after the token (stdin_control's environment_block),
// as `env` before it would set them: launch.env, then CUDA_VISIBLE_DEVICES=SLOTS when the
// host names its devices. Values (an API key passed with -x) never go into a command line:
// every local user reads those in /proc/PID/cmdline, on both hosts.
std::vector<std::pair<std::string, std::string>> node_variables(const NodeLaunch& launch);

// cd CWD && exec LAUNCHER [SUBCOMMAND] --nnodes N --node-rank I --rdzv-endpoint M --token-stdin
//   --env-stdin --stop-on-stdin-eof OPTIONS [--nproc-per-node SLOTS] -- PROGRAM...
std::string launch_command(const NodeLaunch& launch);

}  // namespace ddplaunch::fanout
