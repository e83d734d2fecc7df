// The overloaded-lambdas idiom for std::visit: one lambda per alternative, so a variant
// alternative that nobody handles is a compile error instead of a silent no-op.
#pragma once

namespace ddplaunch {

template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace ddplaunch
