// The ranks waiting at their own prompt, the latest last.
#include "debug/rank_prompts.h"

#include <algorithm>

namespace ddplaunch::debug {

void RankPrompts::asked(RankPrompt prompt) {
  withdrawn(prompt.rank);
  waiting_.push_back(std::move(prompt));
}

void RankPrompts::withdrawn(int rank) {
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [&](const RankPrompt& p) { return p.rank == rank; }),
                 waiting_.end());
}

}  // namespace ddplaunch::debug
