// PROGRAM resolution: torchrun runs `python SCRIPT` unless --no-python; ddplaunch always ran
// PROGRAM directly. Both keep working: only what cannot run on its own gets the python.
#include "config/program_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include "env/program_path.h"

namespace ddplaunch {

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// True when `name` can be exec'd as it is: an executable file at that path (names with a
// '/'), or a program found on PATH (bare names).
bool runs_as_is(const std::string& name) {
  if (ends_with(name, ".py")) return false;
  if (name.find('/') != std::string::npos) return is_executable_file(name) || access(name.c_str(), F_OK) != 0;
  if (!find_program(name).empty()) return true;
  return access(name.c_str(), F_OK) != 0;  // neither on PATH nor a file here: let the spawn name it missing
}

}  // namespace

std::string python_interpreter(const std::string& flag, const std::map<std::string, std::string>& env) {
  if (!flag.empty()) return flag;
  if (auto it = env.find("PYTHON_EXEC"); it != env.end() && !it->second.empty()) return it->second;
  if (is_executable_file("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

std::vector<std::string> program_command(ProgramMode mode, const std::vector<std::string>& program,
                                         const std::string& python) {
  if (program.empty() || mode == ProgramMode::NoPython) return program;
  if (mode == ProgramMode::Auto && runs_as_is(program[0])) return program;
  std::vector<std::string> command{python, "-u"};
  if (mode == ProgramMode::Module) command.push_back("-m");
  command.insert(command.end(), program.begin(), program.end());
  return command;
}

}  // namespace ddplaunch
