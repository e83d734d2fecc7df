// Keeps the launcher runnable on glibc 2.35 (Ubuntu 22.04 GPU machines, bench/run gpu-bundle).
// The statically linked libstdc++ carries std::random_device's object file, which
// calls arc4random — new in glibc 2.36 — so the binary would ask the loader for GLIBC_2.36
// although ddplaunch draws its randomness with getrandom and never uses random_device. A
// definition here satisfies that reference inside the binary: the same contract (uniform
// 32-bit values from the kernel's generator), no versioned import.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>

extern "C" std::uint32_t arc4random() {
  std::uint32_t value = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  for (std::size_t got = 0; got < sizeof value;) {
    const ssize_t n = ::getrandom(bytes + got, sizeof value - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // getrandom cannot fail on Linux >= 3.17 with these flags; never loop forever
    got += static_cast<std::size_t>(n);
  }
  return value;
}
