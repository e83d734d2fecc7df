// Lets fmt print a Generation as its decimal number, exactly as it printed the plain integer
// before. Apart from generation.h so that the rendezvous library itself needs no fmt.
#pragma once

#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation.h"

template <>
struct fmt::formatter<ddplaunch::rendezvous::Generation> : fmt::formatter<std::uint64_t> {
  template <class FormatContext>
  auto format(ddplaunch::rendezvous::Generation g, FormatContext& ctx) const {
    return fmt::formatter<std::uint64_t>::format(g.value, ctx);
  }
};
