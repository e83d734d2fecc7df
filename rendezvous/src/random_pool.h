// Random bytes from the kernel's generator, drawn a page at a time instead of one system call
// per nonce: the master draws a nonce for every connection (16384 and more while a large job
// joins). Internal to rendezvous.
//
// The bytes are getrandom()'s, never another generator's; each is handed out once and wiped
// from the pool as it goes. The pool lives in a page the kernel wipes in a forked child
// (MADV_WIPEONFORK), so a child never hands out what its parent does (or did). Where that
// cannot be had, every draw is its own getrandom() call, as before.
#pragma once

#include <cstddef>

namespace ddplaunch::rendezvous::detail {

// Fills `out` with `n` random bytes (n at most kMaxRandomDraw); false when the kernel gives none.
// Thread-safe.
bool draw_random(unsigned char* out, std::size_t n);
inline constexpr std::size_t kMaxRandomDraw = 256;

}  // namespace ddplaunch::rendezvous::detail
