// CUDA_VISIBLE_DEVICES semantics (pure) and --nproc-per-node resolution against the GPU count.
#include <cctype>
#include <charconv>
#include <string>
#include <thread>
#include <vector>

#include "ddplaunch/preflight/gpus.h"

namespace ddplaunch::preflight {
namespace {

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Leading ordinal like strtoul; -1 when there is none or it is negative.
long leading_ordinal(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  long value = -1;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr == s.data()) return -1;
  return value;
}

}  // namespace

int visible_gpu_count(std::optional<std::string_view> cvd, int physical_count) {
  if (physical_count <= 0) return 0;
  if (!cvd) return physical_count;
  std::string_view value = trim(*cvd);
  for (std::string_view prefix : {"GPU-", "MIG-"}) {
    if (value.substr(0, 4) != prefix) continue;
    std::vector<std::string_view> seen;
    for (auto e : split_commas(value)) {
      e = trim(e);
      if (e.substr(0, 4) != prefix) break;
      for (auto s : seen) {
        if (s == e) return 0;  // repeated id: CUDA exposes nothing
      }
      seen.push_back(e);
    }
    return std::min(static_cast<int>(seen.size()), physical_count);
  }
  std::vector<long> ordinals;
  for (auto e : split_commas(value)) {
    long x = leading_ordinal(trim(e));
    if (x < 0) break;
    for (long o : ordinals) {
      if (o == x) return 0;
    }
    ordinals.push_back(x);
  }
  for (size_t i = 0; i < ordinals.size(); ++i) {
    if (ordinals[i] >= physical_count) return static_cast<int>(i);
  }
  return static_cast<int>(ordinals.size());
}

}  // namespace ddplaunch::preflight
