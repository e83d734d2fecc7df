// A page of getrandom() bytes, handed out once each; see random_pool.h.
#include "random_pool.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace ddplaunch::rendezvous::detail {
namespace {

constexpr std::size_t kPoolPage = 4096;

// At the start of the page, so the kernel's wipe in a child empties the pool too (left = 0).
struct Pool {
  std::size_t left;  // bytes not handed out yet: bytes[0, left)
  unsigned char bytes[kPoolPage - sizeof(std::size_t)];
};
static_assert(sizeof(Pool) == kPoolPage);

// n bytes straight from the kernel (at most 256 per call are never cut short by a signal,
// more may be: both are looped).
bool from_kernel(unsigned char* out, std::size_t n) {
  for (std::size_t got = 0; got < n;) {
    const ssize_t r = ::getrandom(out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

// The process's pool, or null where no page wiped on fork can be had (then every draw asks
// the kernel). Never unmapped: it lives as long as the process.
Pool* pool_page() {
  static Pool* const page = [] () -> Pool* {
#ifdef MADV_WIPEONFORK
    void* at = ::mmap(nullptr, kPoolPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) return nullptr;
    if (::madvise(at, kPoolPage, MADV_WIPEONFORK) != 0) {  // a kernel before 4.14
      ::munmap(at, kPoolPage);
      return nullptr;
    }
    return static_cast<Pool*>(at);  // zero-filled: empty
#else
    return nullptr;
#endif
  }();
  return page;
}

std::mutex pool_mutex;

}  // namespace

bool draw_random(unsigned char* out, std::size_t n) {
  if (n > kMaxRandomDraw) return false;
  Pool* pool = pool_page();
  if (!pool) return from_kernel(out, n);
  std::lock_guard<std::mutex> lock(pool_mutex);
  if (pool->left < n) {
    if (!from_kernel(pool->bytes, sizeof pool->bytes)) {
      explicit_bzero(pool->bytes, sizeof pool->bytes);
      pool->left = 0;
      return false;
    }
    pool->left = sizeof pool->bytes;
  }
  pool->left -= n;
  std::memcpy(out, pool->bytes + pool->left, n);
  explicit_bzero(pool->bytes + pool->left, n);  // handed out: gone from the pool
  return true;
}

}  // namespace ddplaunch::rendezvous::detail
