// A bounded read of a kernel-made file (/proc, /sys): such a file has no size to trust (stat
// says 0) and may be long on a large machine, so its reader says how much it will take.
#pragma once

#include <cstddef>
#include <string>

namespace ddplaunch {

// At most `limit` bytes of the file (more only by the last read's rest, under 8 KiB); "" when it
// cannot be read (gone, not ours, not there).
std::string read_proc_file(const std::string& path, std::size_t limit);

}  // namespace ddplaunch
