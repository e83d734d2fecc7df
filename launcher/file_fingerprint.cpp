// Four independent 64-bit lanes take 32 bytes per step (a multiply, a rotate and a multiply
// each: the CPU overlaps the lanes), the bytes after the last whole block go through FNV-1a,
// and a final mix spreads every bit. Byte-wise FNV-1a over the whole file, as before, cost
// ~10 ms of every start with /usr/bin/python3 as the program; this reads it in ~1 ms. Words
// are read little-endian, as on every processor ddplaunch builds for, so nodes agree.
#include "file_fingerprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

constexpr std::uint64_t kPrimeA = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrimeB = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
constexpr std::size_t kBlock = 32;
constexpr std::size_t kMaxBuffer = std::size_t{256} << 10;

class Fingerprint {
 public:
  // `n` bytes; every call but the last must pass a multiple of kBlock.
  void add(const unsigned char* p, std::size_t n) {
    total_ += n;
    const std::size_t whole = n - n % kBlock;
    for (std::size_t i = 0; i < whole; i += kBlock)
      for (int lane = 0; lane < 4; ++lane) lanes_[lane] = step(lanes_[lane], word(p + i + 8 * lane));
    for (std::size_t i = whole; i < n; ++i) tail_ = (tail_ ^ p[i]) * kFnvPrime;
  }

  std::uint64_t value() const {
    std::uint64_t h = std::rotl(lanes_[0], 1) + std::rotl(lanes_[1], 7) + std::rotl(lanes_[2], 12) +
                      std::rotl(lanes_[3], 18);
    h ^= tail_ + total_ * kPrimeB;
    h ^= h >> 33;
    h *= kPrimeB;
    h ^= h >> 29;
    h *= kPrimeA;
    h ^= h >> 32;
    return h;
  }

 private:
  static std::uint64_t word(const unsigned char* p) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, sizeof w);
    if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
    return w;
  }
  static std::uint64_t step(std::uint64_t lane, std::uint64_t w) { return std::rotl(lane + w * kPrimeB, 31) * kPrimeA; }

  std::uint64_t lanes_[4] = {kPrimeA + kPrimeB, kPrimeB, 0, 0 - kPrimeA};
  std::uint64_t tail_ = kFnvOffset;
  std::uint64_t total_ = 0;
};

}  // namespace

std::uint64_t bytes_fingerprint(std::string_view bytes) {
  Fingerprint f;
  f.add(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return f.value();
}

std::string file_fingerprint(const std::string& path, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  // The buffer fits the file up to 256 KiB (a multiple of kBlock, filled whole before it is
  // hashed so that only the last chunk has a tail): a 6.8 MB interpreter is read in 27 calls
  // instead of 417 (~0.7 ms less here), a small program touches no more pages than it needs.
  struct stat st {};
  const std::size_t size = ::fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : kMaxBuffer;
  const std::size_t capacity = std::clamp((std::min(size, limit) / kBlock + 1) * kBlock, kBlock, kMaxBuffer);
  std::unique_ptr<unsigned char[]> buf(new unsigned char[capacity]);
  Fingerprint f;
  std::size_t total = 0;
  bool failed = false;
  while (total < limit) {
    std::size_t filled = 0;
    const std::size_t want = std::min(capacity, limit - total);
    while (filled < want) {
      const ssize_t n = ::read(fd, buf.get() + filled, want - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) failed = true;
      if (n <= 0) break;
      filled += static_cast<std::size_t>(n);
    }
    f.add(buf.get(), filled);
    total += filled;
    if (filled < want) break;  // end of file (or an error: said below)
  }
  ::close(fd);
  if (failed) return {};
  return fmt::format("{:016x}", f.value());
}

}  // namespace ddplaunch
