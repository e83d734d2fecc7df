// --help: the option table's flags through CLI11's formatter, then what a user needs beside the
// flags: how PROGRAM is run, the worker environment, exit codes and subcommands.
#include <map>

#include <fmt/format.h>

#include "config/cli_app.h"
#include "config/command_line.h"
#include "config/usage_text.h"
#include "ddplaunch/base/exit_codes.h"

namespace ddplaunch {

namespace {

constexpr const char* kIntro =
    "ddplaunch — per-node launcher for distributed PyTorch; runs torchrun's command lines unchanged\n\n"
    "usage:\n"
    "  ddplaunch [options] [--] PROGRAM [ARGS...]      run PROGRAM on this node's workers\n"
    "  ddplaunch --hosts H1,H2 [options] [--] PROGRAM  one ddplaunch per host over ssh, from this terminal\n"
    "  ddplaunch doctor [options]                     rendezvous + every check, start no worker\n"
    "  ddplaunch status --master HOST:PORT            live table of a running job's nodes and ranks\n"
    "  ddplaunch stacks --master HOST:PORT            every rank's stack, grouped (where is it stuck?)\n"
    "  ddplaunch tail --rank R                        follow one rank's output of a running job, from any terminal\n"
    "  ddplaunch timeline [--trace FILE]              the running job's timeline: trace JSON + HTML page\n"
    "  ddplaunch timeline --log-dir DIR [--trace F]   the page again from a finished job's DIR/timeline.json\n\n"
    "examples:\n"
    "  ddplaunch --standalone --nproc-per-node 2 train.py --lr 3e-4\n"
    "  ddplaunch --nnodes 4 --nproc-per-node 8 --rdzv-endpoint node01:29400 -- ./train_binary\n"
    "  srun -N 4 --ntasks-per-node=1 ddplaunch --slurm -- python3 train.py\n"
    "  ddplaunch --hostfile hosts.txt --exclude node03:1 -- python3 train.py   (DeepSpeed's hostfile)\n\n"
    "Every flag also takes torchrun's underscore spelling (--nproc_per_node) and `--flag=value`.\n"
    "[PET_X]: torchrun's environment fallback, used when the flag is not given.";

constexpr const char* kFooter =
    "PROGRAM (as torchrun, but a program that is already an executable runs as is):\n"
    "  NAME.py, or a file that is not executable   PYTHON -u NAME.py ARGS   (PYTHON: --python, $PYTHON_EXEC,\n"
    "                                                                     /usr/bin/python3, else python3)\n"
    "  -m MODULE                                   PYTHON -u -m MODULE ARGS\n"
    "  --no-python PROGRAM, an executable file, or a name on PATH: PROGRAM ARGS as given\n\n"
    "What every worker gets:\n"
    "  MASTER_ADDR MASTER_PORT RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK ROLE_RANK\n"
    "  ROLE_WORLD_SIZE ROLE_NAME TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RUN_ID\n"
    "  TORCHELASTIC_USE_AGENT_STORE=False (rank 0 hosts the c10d store on MASTER_PORT), OMP_NUM_THREADS=1\n"
    "  unless set; NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME on multi-node jobs when you set neither.\n"
    "  DDPLAUNCH_TIMEOUT_S   the group's init deadline, which ddplaunch enforces itself (every rank must\n"
    "                        finish process-group init within it, else the group restarts); given to the\n"
    "                        program for information only: it is NOT applied to init_process_group nor to\n"
    "                        collectives, which keep PyTorch's own timeouts\n"
    "  DDPLAUNCH_GENERATION (restart round) DDPLAUNCH_NODE_RANK DDPLAUNCH_NODE_COUNT DDPLAUNCH_JOB_ID\n"
    "  DDPLAUNCH_STATUS_SOCKET (where the shims report init)\n\n"
    "Exit status:\n"
    "  0     every worker exited 0\n"
    "  N     the first failing worker's exit code (128+signal when killed by a signal)\n"
    "  {}     configuration error: flags, YAML, refused by node 0, failed preflight\n"
    "  {}     launcher failure without a worker status to pass on: node 0 lost, a node lost\n\n"
    "Subcommands:\n"
    "  doctor   join the rendezvous and run every check on every node; start no worker\n"
    "  status   print the nodes and ranks of a running job; on a node of the job it is found by itself\n"
    "           (several: --job ID), elsewhere give --master HOST:PORT (and --job-id/--token when it has them)\n"
    "  stacks   take every rank's stack now (Python frames, else native, else the kernel's) and print\n"
    "           them grouped by identical stack (found like status)\n"
    "  debug    the job's debug console from this terminal (found like status; the job's token is proven):\n"
    "           the ranks stopped in their debugger, :list, :attach R, :cast RANKS CMD, :continue, :quit\n\n"
    "Debugging (README \"Interactive debugging\"):\n"
    "  breakpoint() / pdb.set_trace() on any rank of any node stops that rank; its debugger comes to the\n"
    "  terminal that started the job (every worker's stdin is its debugger's keyboard, fed from there).\n"
    "  While a rank is held the init deadline and the hang watch are suspended. `q` asks, then ends the job.\n"
    "  --pause-ranks R,..  start ranks stopped for `gdb -p`;  hang flags: --hang-suspect-floor, --hang-minimum,\n"
    "  --hang-action.  Data piped into ddplaunch stays the workers' stdin, as under torchrun.\n\n"
    "torchrun flags and what they do here: docs/TORCHRUN-COMPAT.md\n";

}  // namespace

std::string_view usage_intro() { return kIntro; }
std::string usage_footer() { return fmt::format(kFooter, kExitConfigError, kExitFailure); }

std::string usage_text() {
  CLI::App app("", "ddplaunch");
  app.set_help_flag();
  std::map<const CLI::Option*, const OptionSpec*> options;
  add_flags(app, options);
  app.get_formatter()->column_width(36);
  app.footer(usage_footer());
  std::string flags = app.help();
  if (auto usage = flags.find("Usage:"); usage != std::string::npos)  // ours, above, says more
    flags.erase(usage, flags.find('\n', usage) + 1 - usage);
  return std::string(kIntro) + "\n" + flags;
}

}  // namespace ddplaunch
