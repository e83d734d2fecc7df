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

Result<int> resolve_nproc(std::string_view requested, int gpu_count, int cpu_count) {
  std::string_view r = trim(requested);
  if (cpu_count < 1) cpu_count = 1;
  if (r == "gpu-or-1") return Result<int>::success(gpu_count > 0 ? gpu_count : 1);
  if (r == "auto") return Result<int>::success(gpu_count > 0 ? gpu_count : cpu_count);  // torchrun's auto
  if (r == "cpu") return Result<int>::success(cpu_count);
  if (r == "gpu") {
    if (gpu_count > 0) return Result<int>::success(gpu_count);
    return Result<int>::failure("--nproc-per-node gpu but this node sees no GPU (after CUDA_VISIBLE_DEVICES): "
                                "use a number, cpu, or auto (GPUs, else CPUs)");
  }
  int n = 0;
  auto [ptr, ec] = std::from_chars(r.data(), r.data() + r.size(), n);
  if (r.empty() || ec != std::errc{} || ptr != r.data() + r.size() || n <= 0) {
    return Result<int>::failure("--nproc-per-node '" + std::string(requested) +
                                "' is not valid: use a positive number of workers per node (e.g. 8), auto "
                                "(one per GPU, else per CPU), gpu, cpu, or gpu-or-1 (the default)");
  }
  if (gpu_count > 0 && n > gpu_count) {
    return Result<int>::failure("--nproc-per-node " + std::to_string(n) + " but this node sees only " +
                                std::to_string(gpu_count) + " GPU(s) (after CUDA_VISIBLE_DEVICES): workers "
                                "would share or miss GPUs. Use --nproc-per-node " + std::to_string(gpu_count) +
                                " or auto, or make more GPUs visible");
  }
  return Result<int>::success(n);
}

}  // namespace ddplaunch::preflight
