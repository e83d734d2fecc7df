// Parsers of the kernel's texts: see proc_readings.h.
#include "agent/proc_readings.h"

#include <algorithm>
#include <charconv>

namespace ddplaunch {

namespace {

// The line of `text` that starts with `prefix`, without the prefix; none when there is none.
std::optional<std::string_view> line_after(std::string_view text, std::string_view prefix) {
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    if (line.substr(0, prefix.size()) == prefix) return line.substr(prefix.size());
    start = end + 1;
  }
  return std::nullopt;
}

// Words separated by blanks.
std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::size_t start = 0; start < text.size();) {
    start = text.find_first_not_of(" \t", start);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(text.find_first_of(" \t", start), text.size());
    words.push_back(text.substr(start, end - start));
    start = end;
  }
  return words;
}

// A whole decimal word, nothing else in it.
std::optional<unsigned long long> whole_number(std::string_view word) {
  unsigned long long value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc{} || end != word.data() + word.size() || word.empty()) return std::nullopt;
  return value;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// mountinfo writes a blank, tab, newline or backslash in a path as \ooo (octal).
std::string unescaped(std::string_view path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\' && i + 3 < path.size() &&
        std::all_of(path.begin() + static_cast<long>(i) + 1, path.begin() + static_cast<long>(i) + 4,
                    [](char c) { return c >= '0' && c <= '7'; })) {
      out += static_cast<char>((path[i + 1] - '0') * 64 + (path[i + 2] - '0') * 8 + (path[i + 3] - '0'));
      i += 3;
    } else {
      out += path[i];
    }
  }
  return out;
}

// `name` seen under a mount whose top is the cgroup `root`: its directory, or none when the
// cgroup lies outside what the mount shows.
std::optional<std::string> directory_under(const CgroupMount& mount, const std::string& name) {
  if (name.empty() || name[0] != '/') return std::nullopt;
  if (mount.root == "/") return name == "/" ? mount.mount_point : mount.mount_point + name;
  if (name == mount.root) return mount.mount_point;
  if (name.size() > mount.root.size() && name.compare(0, mount.root.size(), mount.root) == 0 &&
      name[mount.root.size()] == '/')
    return mount.mount_point + name.substr(mount.root.size());
  return std::nullopt;
}

}  // namespace

std::optional<CpuTimes> parse_cpu_times(std::string_view proc_stat) {
  auto line = line_after(proc_stat, "cpu ");
  if (!line) return std::nullopt;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice, so the total is the first eight.
  const auto words = words_of(*line);
  if (words.size() < 8) return std::nullopt;
  CpuTimes times;
  for (std::size_t i = 0; i < 8; ++i) {
    auto value = whole_number(words[i]);
    if (!value) return std::nullopt;
    times.total += *value;
    if (i == 7) times.steal = *value;
  }
  return times;
}

std::optional<double> parse_pressure_some_avg10(std::string_view pressure) {
  auto line = line_after(pressure, "some ");
  if (!line) return std::nullopt;
  for (auto word : words_of(*line)) {
    if (word.substr(0, 6) != "avg10=") continue;
    word.remove_prefix(6);
    double value = 0;
    auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (error != std::errc{} || end != word.data() + word.size() || word.empty() || !(value >= 0 && value <= 100))
      return std::nullopt;
    return value / 100.0;
  }
  return std::nullopt;
}

std::optional<ThrottleCounts> parse_cpu_stat(std::string_view cpu_stat) {
  auto periods = line_after(cpu_stat, "nr_periods ");
  auto throttled = line_after(cpu_stat, "nr_throttled ");
  if (!periods || !throttled) return std::nullopt;
  auto p = whole_number(*periods);
  auto t = whole_number(*throttled);
  if (!p || !t || *t > *p) return std::nullopt;
  return ThrottleCounts{*p, *t};
}

std::optional<unsigned long long> parse_process_cpu_ticks(std::string_view pid_stat) {
  const std::size_t paren = pid_stat.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  // After the command: state (field 3) ... utime (14), stime (15).
  const auto words = words_of(pid_stat.substr(paren + 1));
  if (words.size() < 13) return std::nullopt;
  auto user = whole_number(words[11]);
  auto system = whole_number(words[12]);
  if (!user || !system) return std::nullopt;
  return *user + *system;
}

std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  for (std::size_t start = 0; start < mountinfo.size();) {
    const std::size_t end = std::min(mountinfo.find('\n', start), mountinfo.size());
    const auto words = words_of(mountinfo.substr(start, end - start));
    start = end + 1;
    // id parent major:minor root mount_point options [optional fields] - fstype source super_options
    auto dash = std::find(words.begin(), words.end(), std::string_view("-"));
    if (words.size() < 6 || dash == words.end() || words.end() - dash < 4 || dash - words.begin() < 6) continue;
    const std::string_view type = dash[1];
    if (type != "cgroup" && type != "cgroup2") continue;
    CgroupMount mount{unescaped(words[4]), unescaped(words[3]), type == "cgroup2", {}};
    if (!mount.unified)
      for (auto& option : split(dash[3], ','))
        if (option != "rw" && option != "ro") mount.controllers.push_back(std::move(option));
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

std::optional<CpuCgroup> cpu_cgroup_of(std::string_view proc_pid_cgroup, const std::vector<CgroupMount>& mounts) {
  std::optional<std::string> v1_name, v2_name;
  for (const auto& line : split(proc_pid_cgroup, '\n')) {
    // hierarchy-id:controllers:path (the path may itself hold ':')
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const auto controllers = split(std::string_view(line).substr(first + 1, second - first - 1), ',');
    const std::string name = line.substr(second + 1);
    if (id == "0" && controllers == std::vector<std::string>{""}) v2_name = name;
    else if (std::find(controllers.begin(), controllers.end(), "cpu") != controllers.end()) v1_name = name;
  }
  for (const auto& mount : mounts) {
    const bool has_cpu = std::find(mount.controllers.begin(), mount.controllers.end(), "cpu") != mount.controllers.end();
    if (v1_name && !mount.unified && has_cpu)
      if (auto directory = directory_under(mount, *v1_name)) return CpuCgroup{*v1_name, *directory};
  }
  for (const auto& mount : mounts) {
    if (v2_name && mount.unified)
      if (auto directory = directory_under(mount, *v2_name)) return CpuCgroup{*v2_name, *directory};
  }
  return std::nullopt;
}

}  // namespace ddplaunch
