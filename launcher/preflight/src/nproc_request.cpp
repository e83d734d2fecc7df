// nproc_per_node: its text read once, and the count it comes to on this node.
#include "ddplaunch/preflight/nproc_request.h"

#include <charconv>
#include <string>

namespace ddplaunch::preflight {

std::optional<NprocRequest> parse_nproc_request(std::string_view text) {
  if (auto word = kNprocWordNames.parse(text)) return NprocRequest{std::nullopt, *word};
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || n <= 0) return std::nullopt;
  return NprocRequest{n};
}

std::string nproc_request_text(const NprocRequest& request) {
  return request.count ? std::to_string(*request.count) : std::string(kNprocWordNames.name(request.word));
}

std::string nproc_request_choices() {
  return "a positive number of workers per node (e.g. 8), auto (one per GPU, else per CPU), gpu, cpu, or "
         "gpu-or-1 (the default: one per GPU, else 1)";
}

Result<int> resolve_nproc(const NprocRequest& request, int gpu_count, int cpu_count) {
  if (cpu_count < 1) cpu_count = 1;
  if (!request.count) {
    switch (request.word) {
      case NprocWord::GpuOr1: return Result<int>::success(gpu_count > 0 ? gpu_count : 1);
      case NprocWord::Auto: return Result<int>::success(gpu_count > 0 ? gpu_count : cpu_count);  // torchrun's auto
      case NprocWord::Cpu: return Result<int>::success(cpu_count);
      case NprocWord::Gpu:
        if (gpu_count > 0) return Result<int>::success(gpu_count);
        return Result<int>::failure("--nproc-per-node gpu but this node sees no GPU (after CUDA_VISIBLE_DEVICES): "
                                    "use a number, cpu, or auto (GPUs, else CPUs)");
    }
  }
  const int n = request.count.value_or(1);
  if (n <= 0)
    return Result<int>::failure("--nproc-per-node " + std::to_string(n) + " is not valid: use " + nproc_request_choices());
  if (gpu_count > 0 && n > gpu_count) {
    return Result<int>::failure("--nproc-per-node " + std::to_string(n) + " but this node sees only " +
                                std::to_string(gpu_count) + " GPU(s) (after CUDA_VISIBLE_DEVICES): workers "
                                "would share or miss GPUs. Use --nproc-per-node " + std::to_string(gpu_count) +
                                " or auto, or make more GPUs visible");
  }
  return Result<int>::success(n);
}

}  // namespace ddplaunch::preflight
