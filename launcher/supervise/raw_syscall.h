// System calls without libc, for the orphan guard while it shares the launcher's memory
// (supervise/orphan_guard.cpp): libc's wrappers set errno, mark cancellation or resolve
// symbols through the calling thread's TLS — in that process, the launcher's main thread.
#pragma once

namespace ddplaunch::raw {

#if defined(__x86_64__) || defined(__aarch64__)
inline constexpr bool kAvailable = true;

// The kernel's result: a value, or -errno.
[[gnu::always_inline]] inline long call(long number, long a = 0, long b = 0, long c = 0, long d = 0) noexcept {
#if defined(__x86_64__)
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return result;
#else
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
#endif
}
#else
inline constexpr bool kAvailable = false;  // the guard is then always a forked copy
long call(long number, long a = 0, long b = 0, long c = 0, long d = 0) noexcept;
#endif

}  // namespace ddplaunch::raw
