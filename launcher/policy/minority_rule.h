// The etcd coordinator's partition rule. A coordinator that etcd does not answer cannot tell a
// lost etcd quorum (the job should go on) from its own partition (another launcher may lead
// already). It goes on only while more than half of the most launchers ever joined to it at
// once are still joined; on the minority side of a partition it steps down, so that at most
// one side trains. The minority must hold for kConfirm: etcd also stops answering on the
// majority side, for about its election timeout, when the partition took its leader away,
// and a coordinator that lost half of the launchers in the same cut must not take that moment
// for being cut off itself. Pure: the shell checks on every change of etcd's reachability and
// every kCheckInterval while it coordinates.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "policy/sustained_condition.h"

namespace ddplaunch {

class MinorityRule {
 public:
  // etcd's election timeout is 1 s by default, but an election after the leader was cut away
  // took up to 2 s on an idle machine and over 5 s on a loaded one (etcd silent on the majority
  // side too, which must not step down then). The cost of waiting longer is small: a
  // coordinator cut off keeps its old workers (which cannot make progress without the lost
  // peers) a few seconds longer, and it starts no generation without etcd's confirmation.
  static constexpr std::chrono::milliseconds kConfirm{6000};
  static constexpr std::chrono::seconds kCheckInterval{1};

  // One check: `joined` launchers are joined to this coordinator now. The reason to step down,
  // or nothing.
  std::optional<std::string> check(bool etcd_unreachable, std::size_t joined, PolicyClock::time_point now);

 private:
  std::size_t most_launchers_ = 0;
  SustainedCondition minority_{kConfirm};
};

}  // namespace ddplaunch
