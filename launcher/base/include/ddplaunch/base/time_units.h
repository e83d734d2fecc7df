// Seconds as the config holds them (double) → the milliseconds timers take.
#pragma once

#include <chrono>

namespace ddplaunch {

inline std::chrono::milliseconds seconds_to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

}  // namespace ddplaunch
