// RankPrompts: the ranks that wait at a prompt of their own (input("continue? [y/N] "),
// getpass, a login menu) — not in a debugger — as the console knows them. A line the person
// types while no rank is stopped in a debugger answers the latest of them; with none waiting
// it goes to rank 0, as a line typed at torchrun's terminal reaches the ranks' shared stdin.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::debug {

struct RankPrompt {
  int rank = -1;
  int node = -1;  // the node the prompt came from (-1: not known, every node is told)
  Generation generation;
  std::string shown;  // the prompt as the rank's line would show it ("[rank0]: continue? [y/N] ")
  bool secret = false;  // getpass: typing is not shown
};

class RankPrompts {
 public:
  void asked(RankPrompt prompt);  // the rank's latest prompt (an earlier one of it is replaced)
  void withdrawn(int rank);       // answered, or the rank wrote on past it
  void clear() { waiting_.clear(); }
  const RankPrompt* latest() const { return waiting_.empty() ? nullptr : &waiting_.back(); }
  std::size_t size() const { return waiting_.size(); }

 private:
  std::vector<RankPrompt> waiting_;  // in the order asked, the latest last
};

}  // namespace ddplaunch::debug
