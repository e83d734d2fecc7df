// Command-line parsing: flags become the same key=value settings the YAML file uses,
// so the CLI and the config file share one table of meanings (see yaml_config.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddplaunch {

enum class Subcommand { Run, Doctor, Status };

struct CommandLine {
  Subcommand subcommand = Subcommand::Run;
  std::string config_path;                                    // --config FILE
  std::vector<std::pair<std::string, std::string>> settings;  // in order given
  bool dry_run = false;
  bool help = false;
  bool version = false;
  std::vector<std::string> program;                           // PROGRAM [ARGS...]
  std::vector<std::string> errors;                            // user-facing, one per problem
};

CommandLine parse_command_line(const std::vector<std::string>& args);  // args without argv[0]

std::string usage_text();

}  // namespace ddplaunch
