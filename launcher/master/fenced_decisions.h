// etcd: the coordinator's decisions in the order etcd allows them. A batch that starts a
// generation waits until etcd confirmed that this coordinator still leads (the fenced write of
// the state that followed it), and every batch after it waits behind it, in order, so a
// deposed or cut-off coordinator starts nothing. What is only said (log lines) is said at once.
// No sockets, no timers: the confirmation comes from whoever wrote the state.
#pragma once

#include <deque>
#include <functional>

#include "policy/job_policy.h"

namespace ddplaunch {

class FencedDecisions {
 public:
  using Carry = std::function<void(const JobPolicy::Decisions&)>;
  using Say = std::function<void(const decision::Log&)>;
  FencedDecisions(Carry carry, Say say) : carry_(std::move(carry)), say_(std::move(say)) {}

  // Nothing waits: a batch that needs no fence may be carried out at once.
  bool idle() const { return held_.empty(); }
  // Holds `decisions` (their logs are said now). For a fenced batch, the call that releases it
  // once etcd confirmed the write; for any other an empty function (it goes when those before
  // it went).
  std::function<void()> hold(JobPolicy::Decisions decisions, bool fenced);
  void clear() { held_.clear(); }  // the coordinator stops acting: nothing held is carried out

 private:
  struct Batch {
    JobPolicy::Decisions decisions;
    bool fenced = false;
    bool confirmed = false;
  };
  void release();

  Carry carry_;
  Say say_;
  std::deque<Batch> held_;
  long front_serial_ = 0;  // of held_.front(): confirmations name their batch by serial
};

}  // namespace ddplaunch
