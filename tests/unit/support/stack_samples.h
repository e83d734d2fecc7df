// Sample stacks and rank reports shared by the tests of the stack report and the hang watch
// (policy) and of the stack messages on the wire (agent).
#pragma once

#include <string>

#include "policy/rank_phase.h"
#include "policy/stack_report.h"

namespace ddplaunch::stack_samples {

// What faulthandler writes for a rank stuck on its own, and for one waiting in DDP's backward.
inline const std::string kStalledRaw =
    "Thread 0x00007f3a1c5fe6c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n"
    "\n"
    "Current thread 0x00007f3a2b1c4740 (most recent call first):\n"
    "  File \"/work/hang_ddp.py\", line 22 in stall_here\n"
    "  File \"/work/hang_ddp.py\", line 57 in main\n"
    "  File \"/work/hang_ddp.py\", line 64 in <module>\n";
inline const std::string kWaitingRaw =
    "Current thread 0x00007f11aa0c4740 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 200 in backward\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 487 in backward\n"
    "  File \"/work/hang_ddp.py\", line 50 in main\n"
    "  File \"/work/hang_ddp.py\", line 64 in <module>\n";

inline RankReport running(int rank) {
  RankReport r;
  r.rank = rank;
  r.pid = 10 + rank;
  r.phase = RankPhase::Running;
  r.init_entries = 1;
  r.state = "running";
  return r;
}

inline RankStack python_stack(int rank, const std::string& raw) {
  RankStack s;
  s.rank = rank;
  s.node = rank / 2;
  s.host = "host" + std::to_string(rank / 2);
  s.pid = 1000L + rank;
  s.source = "python";
  s.text = normalise_python_stack(raw);
  return s;
}

}  // namespace ddplaunch::stack_samples
