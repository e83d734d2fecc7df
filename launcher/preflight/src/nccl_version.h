// NCCL version lookups shared by gpus.cpp, and the bounded file read gpu_needs.cpp shares
// (inside the preflight module only).
#pragma once

#include <cstddef>
#include <string>

#include "ddplaunch/preflight/gpus.h"

namespace ddplaunch::preflight {

// At most `limit` bytes of a file; "" when it cannot be opened.
std::string read_small_file(const std::string& path, std::size_t limit);

std::string nccl_version_text(int code);  // 21805 → "2.18.5"; before 2.9: 2708 → "2.7.8"

// The version per `lookup`; `note` says where it came from or why it was not found.
std::string find_nccl_version(NcclLookup lookup, std::string& note);

}  // namespace ddplaunch::preflight
