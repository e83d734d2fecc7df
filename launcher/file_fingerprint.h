// The fingerprint of a file's bytes (the program a job runs, compared across nodes and kept
// in the run history): equal bytes give equal fingerprints on every node, a change anywhere
// in the first `limit` bytes changes it. Read at every launcher start, so it must cost little
// even for a large program: /usr/bin/python3 is ~7 MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddplaunch {

// 16 hex digits, or "" when the file cannot be read. Only its equality means anything.
std::string file_fingerprint(const std::string& path, std::size_t limit = std::size_t{64} << 20);

// The same over bytes in memory (what file_fingerprint computes over the file's first
// `limit` bytes), for tests.
std::uint64_t bytes_fingerprint(std::string_view bytes);

}  // namespace ddplaunch
