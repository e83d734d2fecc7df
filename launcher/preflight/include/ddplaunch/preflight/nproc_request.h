// nproc_per_node as asked: a number of workers, or a word for what to count on the node at
// start (torchrun's auto, gpu, cpu; ddplaunch's default gpu-or-1). Read from its text once,
// by the config's option row; resolve_nproc (gpus.h) turns it into a count.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "ddplaunch/base/name_table.h"
#include "ddplaunch/base/result.h"

namespace ddplaunch::preflight {

enum class NprocWord { GpuOr1, Auto, Gpu, Cpu };
inline constexpr NameTable<NprocWord, 4> kNprocWordNames{{{
    {NprocWord::GpuOr1, "gpu-or-1"},  // GPUs visible on the node, else 1
    {NprocWord::Auto, "auto"},        // GPUs, else CPUs
    {NprocWord::Gpu, "gpu"},          // GPUs; an error without any
    {NprocWord::Cpu, "cpu"},          // CPUs
}}};

struct NprocRequest {
  std::optional<int> count;            // a number given: this many workers
  NprocWord word = NprocWord::GpuOr1;  // else counted on the node
  bool operator==(const NprocRequest&) const = default;
};

// "8", "auto", "gpu", "cpu", "gpu-or-1"; nothing for anything else, 0 and negative numbers
// included.
std::optional<NprocRequest> parse_nproc_request(std::string_view text);
// The text parse_nproc_request reads back: "8", or the word.
std::string nproc_request_text(const NprocRequest& request);
// What the text may be, for messages.
std::string nproc_request_choices();

// How many workers this node starts: the count asked for, or the word's count (auto: GPUs if
// any, else CPUs; gpu: GPUs, an error without; cpu: CPUs; gpu-or-1: GPUs if any, else 1).
// A count above gpu_count when gpu_count > 0 is an error naming both numbers and the fix.
Result<int> resolve_nproc(const NprocRequest& request, int gpu_count,
                          int cpu_count = static_cast<int>(std::thread::hardware_concurrency()));

}  // namespace ddplaunch::preflight
