// Finding a flag's row by what was typed: its spellings, a prefix of one, a near miss.
#include "config/flag_names.h"

#include <algorithm>

namespace ddplaunch {

namespace {

std::string normalized(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> spellings(const OptionSpec& flag) {
  std::vector<std::string> out;
  std::string names(flag.names);
  for (std::size_t start = 0; start < names.size();) {
    auto end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    out.push_back(names.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string primary_name(const OptionSpec& flag) {
  for (const auto& s : spellings(flag))
    if (s.rfind("--", 0) == 0) return s.substr(2);
  return spellings(flag).front().substr(1);
}

const OptionSpec* find_flag(std::string_view name) {
  const std::string wanted = normalized(name);
  for (const OptionSpec& flag : flag_table())
    for (const auto& s : spellings(flag))
      if (s.substr(s.find_first_not_of('-')) == wanted) return &flag;
  return nullptr;
}

std::vector<const OptionSpec*> flags_with_prefix(std::string_view prefix) {
  const std::string wanted = normalized(prefix);
  std::vector<const OptionSpec*> out;
  if (wanted.empty()) return out;
  for (const OptionSpec& flag : flag_table())
    for (const auto& s : spellings(flag))
      if (s.rfind("--", 0) == 0 && s.compare(2, wanted.size(), wanted) == 0) {
        out.push_back(&flag);  // once per flag, whichever of its spellings matched
        break;
      }
  return out;
}

std::string suggest_flag(std::string_view typed) {
  const std::string wanted = normalized(typed.substr(std::min(typed.find_first_not_of('-'), typed.size())));
  std::string best;
  std::size_t best_distance = 0;
  for (const OptionSpec& flag : flag_table())
    for (const auto& s : spellings(flag)) {
      if (s.rfind("--", 0) != 0) continue;
      std::string name = s.substr(2);
      std::size_t d = edit_distance(wanted, name);
      // A prefix of a long name (--nproc) is as good as a typo of it.
      if (name.rfind(wanted, 0) == 0 && wanted.size() >= 3) d = std::min<std::size_t>(d, 1);
      if (best.empty() || d < best_distance) best = s, best_distance = d;
    }
  const std::size_t allowed = std::max<std::size_t>(2, wanted.size() / 3);
  return best_distance <= allowed ? best : "";
}

}  // namespace ddplaunch
