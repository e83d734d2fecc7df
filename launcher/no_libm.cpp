// The launcher loads no libm (loading and relocating it would cost every start ~10 page
// faults, a sixth of `ddplaunch --version`). What it used of libm is in base/small_math.h;
// what remains is the statically linked libstdc++'s: its floating-point from_chars and
// to_chars (the rendezvous wire's doubles) save and set the rounding mode. Defined here, as
// glibc defines them on these machines, that reference is satisfied inside the binary; with
// --as-needed (launcher/CMakeLists.txt) libm is then not loaded. Other architectures keep libm.
#include <fenv.h>

#if defined(__x86_64__)
// The x87 control word holds the mode for fegetround; fesetround sets it there and in MXCSR.
extern "C" int fegetround() noexcept {
  unsigned short control;
  __asm__ volatile("fnstcw %0" : "=m"(control));
  return control & 0xc00;
}

extern "C" int fesetround(int mode) noexcept {
  if ((mode & ~0xc00) != 0) return 1;
  unsigned short control;
  __asm__ volatile("fnstcw %0" : "=m"(control));
  control = static_cast<unsigned short>((control & ~0xc00) | mode);
  __asm__ volatile("fldcw %0" : : "m"(control));
  unsigned int mxcsr;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  mxcsr = (mxcsr & ~0x6000U) | (static_cast<unsigned int>(mode) << 3);
  __asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
  return 0;
}
#elif defined(__aarch64__)
// FPCR bits 22-23.
extern "C" int fegetround() noexcept {
  unsigned long fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  return static_cast<int>(fpcr & 0xc00000);
}

extern "C" int fesetround(int mode) noexcept {
  if ((mode & ~0xc00000) != 0) return 1;
  unsigned long fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  fpcr = (fpcr & ~0xc00000UL) | static_cast<unsigned long>(mode);
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
  return 0;
}
#endif
