// NCCL's version without loading libnccl (a library of hundreds of MiB: mapping and relocating
// it cost the launcher most of its start-up): the library's resolved file name, else the
// nccl.h installed beside it; ncclGetVersion through dlopen only when the caller allows it.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "ddplaunch/preflight/gpus.h"
#include "nccl_version.h"

namespace ddplaunch::preflight {
namespace {

bool is_file(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string dirname_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string(".") : std::string(path.substr(0, slash));
}

// The value of `#define NAME <digits>` in a header; "" when absent.
std::string define_value(std::string_view text, std::string_view name) {
  const std::string key = "#define " + std::string(name);
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    std::size_t p = at + key.size();
    if (p >= text.size() || (text[p] != ' ' && text[p] != '\t')) continue;  // NCCL_MAJOR_X
    p = text.find_first_not_of(" \t", p);
    if (p == std::string_view::npos) return {};
    std::size_t end = text.find_first_not_of("0123456789", p);
    std::string_view digits = text.substr(p, (end == std::string_view::npos ? text.size() : end) - p);
    if (all_digits(digits)) return std::string(digits);
  }
  return {};
}

using NcclGetVersion = int (*)(int*);

std::string version_through_dlopen() {
  void* lib = ::dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return {};
  auto get = reinterpret_cast<NcclGetVersion>(::dlsym(lib, "ncclGetVersion"));
  int v = 0;
  std::string text = get && get(&v) == 0 && v > 0 ? nccl_version_text(v) : std::string();
  ::dlclose(lib);
  return text;
}

}  // namespace

std::string read_small_file(const std::string& path, std::size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[65536];
  for (ssize_t n; text.size() < limit && (n = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::string nccl_version_text(int v) {  // 21805 -> "2.18.5"; before 2.9: 2708 -> "2.7.8"
  if (v >= 10000) return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
}

std::string nccl_version_from_file_name(std::string_view name) {
  constexpr std::string_view kPrefix = "libnccl.so.";
  if (name.rfind(kPrefix, 0) != 0) return {};
  std::string_view rest = name.substr(kPrefix.size());
  int parts = 0;
  for (std::size_t start = 0;; ++parts) {
    std::size_t dot = rest.find('.', start);
    if (!all_digits(rest.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      return {};
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 2 ? std::string(rest) : std::string();  // major.minor.patch, nothing less
}

std::string nccl_version_from_header(std::string_view text) {
  std::string major = define_value(text, "NCCL_MAJOR"), minor = define_value(text, "NCCL_MINOR"),
              patch = define_value(text, "NCCL_PATCH");
  if (major.empty() || minor.empty() || patch.empty()) return {};
  return major + "." + minor + "." + patch;
}

std::string locate_library(std::string_view soname, std::string_view ld_library_path, std::string_view ld_cache) {
  for (std::size_t start = 0; start <= ld_library_path.size();) {
    std::size_t colon = ld_library_path.find(':', start);
    if (colon == std::string_view::npos) colon = ld_library_path.size();
    std::string dir(ld_library_path.substr(start, colon - start));
    if (!dir.empty() && is_file(dir + "/" + std::string(soname))) return dir + "/" + std::string(soname);
    start = colon + 1;
  }
  // The cache's string table holds each library's full path, NUL-terminated: no need to
  // parse its (version-dependent) entry records to find "…/<soname>".
  const std::string suffix = "/" + std::string(soname);
  for (std::size_t start = 0; start < ld_cache.size();) {
    std::size_t end = ld_cache.find('\0', start);
    if (end == std::string_view::npos) end = ld_cache.size();
    std::string_view entry = ld_cache.substr(start, end - start);
    if (entry.size() > suffix.size() && entry.front() == '/' &&
        entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) == 0 && is_file(std::string(entry)))
      return std::string(entry);
    start = end + 1;
  }
  return {};
}

std::string find_nccl_version(NcclLookup lookup, std::string& note) {
  if (lookup == NcclLookup::Skip) return {};
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  const std::string path =
      locate_library("libnccl.so.2", ld_path ? ld_path : "", read_small_file("/etc/ld.so.cache", 16u << 20));
  if (!path.empty()) {
    char resolved[PATH_MAX];
    const std::string real = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
    if (std::string v = nccl_version_from_file_name(basename_of(real)); !v.empty()) {
      note = "NCCL " + v + " from the name of " + real;
      return v;
    }
    // A library installed as plain libnccl.so.2 (CUDA's bundle, some containers): its nccl.h
    // lives in ../include (prefix layout) or ../../include (Debian's multiarch lib dirs).
    const std::string dir = dirname_of(real);
    for (const std::string& header : {dir + "/../include/nccl.h", dir + "/../../include/nccl.h"}) {
      if (std::string v = nccl_version_from_header(read_small_file(header, 1u << 20)); !v.empty()) {
        note = "NCCL " + v + " from " + header + " beside " + real;
        return v;
      }
    }
  }
  if (lookup != NcclLookup::FilesThenLoad) {
    note = path.empty() ? "libnccl.so.2 not found (LD_LIBRARY_PATH, ld.so.cache)"
                        : "NCCL version not in the name of " + path + " nor in a nccl.h beside it";
    return {};
  }
  std::string v = version_through_dlopen();
  note = v.empty() ? "libnccl.so.2 not loadable" : "NCCL " + v + " from ncclGetVersion";
  return v;
}

}  // namespace ddplaunch::preflight
