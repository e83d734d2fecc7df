// Questions asked of the option table: its flags as --help groups them, the row of a config
// key, a group's title.
#include "config/option_table.h"

#include <algorithm>

namespace ddplaunch {

std::vector<const OptionSpec*> flags_by_group() {
  std::vector<const OptionSpec*> out;
  for (const OptionSpec& row : flag_table()) out.push_back(&row);
  std::stable_sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->group < b->group; });
  return out;
}

const OptionSpec* find_key(std::string_view key) {
  for (const OptionSpec& row : option_table())
    if (!row.key.empty() && row.key == key) return &row;
  return nullptr;
}

std::string_view group_title(FlagGroup group) {
  using G = FlagGroup;
  switch (group) {
    case G::Config: return "General";
    case G::JobShape: return "Job shape";
    case G::Rendezvous: return "Rendezvous (torchrun's static and c10d both map here)";
    case G::Program: return "Program (PROGRAM after the options or after --)";
    case G::Restarts: return "Restarts";
    case G::Stopping: return "Stopping";
    case G::Output: return "Output";
    case G::FanOut: return "Fan-out (one ddplaunch per host over ssh; ssh command: $DDPLAUNCH_SSH, default ssh)";
    case G::Checks: return "Checks";
    case G::Placement: return "Placement";
    case G::Debugging: return "Debugging (breakpoint() on any rank reaches this terminal; README \"Interactive debugging\")";
  }
  return "";
}

}  // namespace ddplaunch
