// Finding torch/version.py the way the interpreter's sys.path would, by file system only.
#include "env/torch_install.h"

#include <fcntl.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include "env/program_path.h"

namespace ddplaunch {

namespace fs = std::filesystem;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// "python3.11" from the interpreter's real file name, or "" when it does not say: the whole
// name is python<digits>.<digits>. (Matched by hand: compiling a std::regex cost every
// start about a million instructions.)
std::string version_dir_name(const fs::path& python) {
  std::error_code ec;
  fs::path real = fs::canonical(python, ec);
  const std::string name = (ec ? python : real).filename().string();
  std::string_view rest(name);
  if (rest.substr(0, 6) != "python") return "";
  rest.remove_prefix(6);
  const std::size_t major = std::find_if_not(rest.begin(), rest.end(), is_digit) - rest.begin();
  if (major == 0 || major >= rest.size() || rest[major] != '.') return "";
  const std::string_view minor = rest.substr(major + 1);
  if (minor.empty() || !std::all_of(minor.begin(), minor.end(), is_digit)) return "";
  return name;
}

// `__version__ = '2.3.1'` at the start of a line (either quote, blank space around `=`): the
// text up to the next quote, at least one character.
std::optional<std::string> version_assignment(std::string_view line) {
  constexpr std::string_view kName = "__version__";
  if (line.substr(0, kName.size()) != kName) return std::nullopt;
  std::size_t i = kName.size();
  auto skip_space = [&] {
    while (i < line.size() && is_space(line[i])) ++i;
  };
  skip_space();
  if (i >= line.size() || line[i] != '=') return std::nullopt;
  ++i;
  skip_space();
  if (i >= line.size() || (line[i] != '\'' && line[i] != '"')) return std::nullopt;
  ++i;
  const std::size_t end = line.find_first_of("'\"", i);
  if (end == std::string_view::npos || end == i) return std::nullopt;
  return std::string(line.substr(i, end - i));
}

// lib/pythonX.Y under `prefix`; when X.Y is unknown, every lib/python3.* there.
std::vector<fs::path> lib_dirs(const fs::path& prefix, const std::string& versioned) {
  std::vector<fs::path> out;
  if (!versioned.empty()) {
    out.push_back(prefix / "lib" / versioned);
    return out;
  }
  std::error_code ec;
  for (fs::directory_iterator it(prefix / "lib", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("python3.", 0) == 0) out.push_back(it->path());
  return out;
}

std::optional<std::string> read_version(const fs::path& site) {
  std::ifstream in(site / "torch" / "version.py");
  if (!in) return std::nullopt;
  std::string text;
  for (int i = 0; i < 50 && std::getline(in, text); ++i)
    if (auto version = version_assignment(text)) return version;
  return std::nullopt;
}

}  // namespace

bool may_start_python(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  for (std::string_view word : command)
    if (word.find("python") != std::string_view::npos || word.ends_with(".py")) return true;
  const std::string path = find_program(command.front());
  const int fd = path.empty() ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // unknown: as before, torch/version.py is looked for
  char magic[4] = {};
  const bool elf = ::read(fd, magic, sizeof magic) == sizeof magic && std::string_view(magic, 4) == "\x7f" "ELF";
  ::close(fd);
  return !elf;
}

std::string default_python_exec(const Environment& base) {
  auto it = base.find("PYTHON_EXEC");
  return it != base.end() && !it->second.empty() ? it->second : "/usr/bin/python3";
}

std::optional<std::string> find_torch_version(const std::string& python_exec, const Environment& base) {
  std::vector<fs::path> sites;
  // sys.path order: PYTHONPATH, then the user site, then the installation's own.
  if (auto it = base.find("PYTHONPATH"); it != base.end()) {
    std::size_t start = 0;
    while (start <= it->second.size()) {
      std::size_t end = it->second.find(':', start);
      if (end == std::string::npos) end = it->second.size();
      if (end > start) sites.emplace_back(it->second.substr(start, end - start));
      start = end + 1;
    }
  }
  fs::path python = python_exec;
  if (python.is_relative()) {
    // A bare name: the first one on PATH, as exec would find it.
    auto path = base.find("PATH");
    std::string dirs = path == base.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second;
    std::size_t start = 0;
    while (start <= dirs.size()) {
      std::size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      fs::path candidate = fs::path(dirs.substr(start, end - start)) / python_exec;
      if (end > start && ::access(candidate.c_str(), X_OK) == 0) {
        python = candidate;
        break;
      }
      start = end + 1;
    }
  }
  const std::string versioned = version_dir_name(python);
  if (auto home = base.find("HOME"); home != base.end() && !versioned.empty())
    sites.push_back(fs::path(home->second) / ".local" / "lib" / versioned / "site-packages");
  // The venv (or conda env) the path names first, then the installation it links to.
  std::vector<fs::path> prefixes{python.parent_path().parent_path()};
  std::error_code ec;
  fs::path real = fs::canonical(python, ec);
  if (!ec && real.parent_path().parent_path() != prefixes[0]) prefixes.push_back(real.parent_path().parent_path());
  for (const auto& prefix : prefixes) {
    for (const auto& lib : lib_dirs(prefix, versioned)) sites.push_back(lib / "site-packages");
    for (const auto& lib : lib_dirs(prefix / "local", versioned)) sites.push_back(lib / "dist-packages");
    for (const auto& lib : lib_dirs(prefix, versioned)) sites.push_back(lib / "dist-packages");
    sites.push_back(prefix / "lib" / "python3" / "dist-packages");  // Debian
  }
  for (const auto& site : sites)
    if (auto version = read_version(site)) return version;
  return std::nullopt;
}

std::optional<bool> torch_uses_torch_nccl_prefix(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return major > 2 || (major == 2 && minor >= 2);
}

}  // namespace ddplaunch
