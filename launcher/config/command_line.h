// Command-line parsing: flags become the same key=value settings the YAML file uses, so
// the CLI and the config file share one table of meanings. The flags themselves, torchrun's
// spellings and their PET_* fallbacks are rows of the option table (option_table.h).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddplaunch {

enum class Subcommand { Run, Doctor, Status, Stacks, Debug, Timeline, Tail };

// How PROGRAM is started (torchrun's -m / --no-python / --run-path); see program_command.h.
enum class ProgramMode { Auto, Module, NoPython, RunPath };

// --hosts / --hostfile (with --include / --exclude): this ddplaunch starts one ddplaunch per
// host over ssh instead of running workers itself (launcher/fanout/).
struct FanoutFlags {
  std::string hosts, hostfile, include, exclude;
  std::vector<std::string> exported;  // -x VAR or -x VAR=VALUE, in order: passed to every node
  std::string env_file;               // --env-file FILE: VAR=VALUE lines passed to every node
  bool requested() const { return !hosts.empty() || !hostfile.empty(); }
};

struct CommandLine {
  Subcommand subcommand = Subcommand::Run;
  std::string config_path;                                    // --config FILE
  std::vector<std::pair<std::string, std::string>> settings;  // in order given, then PET_* fallbacks
  bool dry_run = false;
  bool help = false;
  bool version = false;
  bool print_default_config = false;                          // --print-default-config
  bool man = false;                                           // --man
  ProgramMode program_mode = ProgramMode::Auto;
  std::string python;                                         // --python PATH ("" = PYTHON_EXEC, else default)
  std::vector<std::string> program;                           // PROGRAM [ARGS...] as typed
  std::vector<std::string> notes;                             // tell the user once (info)
  std::vector<std::string> errors;                            // user-facing, one per problem
  FanoutFlags fanout;
  bool status_watch = false;                                  // `ddplaunch status --watch`: redrawn every second
  bool status_json = false;                                   // `ddplaunch status --json`: one JSON object
  bool token_stdin = false;                                   // --token-stdin: the token is stdin's first line
  bool env_stdin = false;                                     // --env-stdin: the fan-out's variables follow the token on stdin
  bool stop_on_stdin_eof = false;                             // --stop-on-stdin-eof (what a fan-out's node gets)
  int gdb_rank = -1;                                          // `ddplaunch debug --gdb R`: attach gdb to R at once
  int tail_rank = -1;                                         // `ddplaunch tail --rank R`: the rank to follow
  std::vector<std::string> options;                           // the options as given, each "--primary-name[=value]"
};

// args without argv[0]. PET_* variables (torchrun's environment fallbacks) are read from
// `env` for every torchrun flag the command line did not give; flags win.
CommandLine parse_command_line(const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env);
// The same, reading PET_* from this process's environment.
CommandLine parse_command_line(const std::vector<std::string>& args);

// --help: every flag of the table, grouped, then the worker environment, exit codes and
// subcommands.
std::string usage_text();

}  // namespace ddplaunch
