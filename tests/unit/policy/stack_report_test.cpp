// The stack report's pure parts (policy/stack_report): stacks grouped and summarised, thread ids
// and addresses dropped so that identical stacks compare equal, and the likely stuck rank named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/stack_report.h"
#include "stack_samples.h"

namespace {

using namespace ddplaunch;
using namespace ddplaunch::stack_samples;

TEST(StackReport, RankRangesCompressRuns) {
  EXPECT_EQ(rank_ranges({8, 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15}), "0-6,8-15");
  EXPECT_EQ(rank_ranges({7}), "7");
  EXPECT_EQ(rank_ranges({3, 1, 1}), "1,3");
  EXPECT_EQ(rank_ranges({}), "");
}

TEST(StackReport, PythonStacksLoseThreadIdsSoIdenticalStacksCompareEqual) {
  std::string a = normalise_python_stack(kWaitingRaw);
  std::string b = kWaitingRaw;
  b.replace(b.find("0x00007f11aa0c4740"), 18, "0x00007fffffff0000");
  EXPECT_EQ(a, normalise_python_stack(b));
  EXPECT_EQ(a.find("0x"), std::string::npos) << a;
}

TEST(StackReport, SummaryNamesTheInnermostFrameAndTheProgramsOwnLine) {
  EXPECT_EQ(stack_summary(normalise_python_stack(kWaitingRaw)), "backward ← main() at hang_ddp.py:50");
  // The main thread (the one running <module>) is summarised, not the helper thread.
  EXPECT_EQ(stack_summary(normalise_python_stack(kStalledRaw)), "stall_here() at hang_ddp.py:22");
  EXPECT_EQ(stack_summary("wchan: futex_wait_queue\n"), "in the kernel: futex_wait_queue");
}

TEST(StackReport, NativeStacksLoseAddressesAndKeepSourceLines) {
  const std::string raw =
      "PID 4242 - process\n"
      "TID 4242:\n"
      "#0  0x00007f0d4b2ea4b0 __libc_pause - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "    ../sysdeps/unix/sysv/linux/pause.c:29:10\n"
      "#1  0x000055d0c3a1b2c3 (anonymous namespace)::stall_forever() - /build/train_binary\n"
      "    /src/worker_shim/examples/train_binary.cpp:27:5\n"
      "#2  0x000055d0c3a1b9f1 main - /build/train_binary\n"
      "    /src/worker_shim/examples/train_binary.cpp:133:20\n";
  std::string text = normalise_native_stack(raw);
  EXPECT_EQ(text.find("0x"), std::string::npos) << text;
  EXPECT_NE(text.find("#1 stall_forever() (train_binary) at "
                      "/src/worker_shim/examples/train_binary.cpp:27"),
            std::string::npos)
      << text;
  EXPECT_EQ(stack_summary(text), "__libc_pause ← stall_forever() at train_binary.cpp:27");
}

TEST(StackReport, GdbStacksLoseAddressesAndThreadIds) {
  const std::string raw =
      "[New LWP 4243]\n"
      "Thread 1 (Thread 0x7f0d4b1e3740 (LWP 4242) \"train_binary\"):\n"
      "#0  0x00007f0d4b2ea4b0 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
      "#1  0x000055d0c3a1b2c3 in stall_forever () at /src/train_binary.cpp:27\n"
      "#2  main (argc=7, argv=0x7ffd) at /src/train_binary.cpp:133\n";
  std::string text = normalise_gdb_stack(raw);
  EXPECT_EQ(text,
            "Thread:\n  #0 __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
            "  #1 stall_forever () at /src/train_binary.cpp:27\n  #2 main (argc=7, argv=0x7ffd) at /src/train_binary.cpp:133\n");
  EXPECT_EQ(stack_summary(text), "__libc_pause ← stall_forever() at train_binary.cpp:27");
}

TEST(StackReport, GroupsIdenticalStacksAndNamesTheStuckRankFirst) {
  std::vector<RankStack> stacks;
  for (int r = 0; r < 16; ++r) stacks.push_back(python_stack(r, r == 7 ? kStalledRaw : kWaitingRaw));
  std::vector<int> silent;
  for (int r = 0; r < 16; ++r) silent.push_back(r);
  EXPECT_EQ(likely_stuck(stacks, silent), std::vector<int>{7});
  std::string text = render_grouped_stacks(stacks, silent, "hang: ranks 0-15 made no progress", 17);
  auto stuck = text.find("rank 7 (STUCK): stall_here() at hang_ddp.py:22 [python; node 3 host3]");
  auto others = text.find("ranks 0-6,8-15: backward ← main() at hang_ddp.py:50 [python;");
  ASSERT_NE(stuck, std::string::npos) << text;
  ASSERT_NE(others, std::string::npos) << text;
  EXPECT_LT(stuck, others) << text;
  EXPECT_NE(text.find("likely stuck: rank 7"), std::string::npos) << text;
  EXPECT_NE(text.find("no stack from rank 16"), std::string::npos) << text;
}

// The hang deadline's round was cut short (rank 1's stack tool too slow): the suspect round's
// verdict stands — unless this round shows that rank waiting in a collective now.
TEST(StackReport, ARoundWithoutTheStuckRanksStackKeepsTheEarlierVerdict) {
  std::vector<RankStack> partial{python_stack(0, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(partial, {0, 1}, {1}), std::vector<int>{1});
  EXPECT_EQ(likely_stuck({}, {0, 1}, {1}), std::vector<int>{1});
  EXPECT_EQ(likely_stuck(partial, {0, 1}), (std::vector<int>{0, 1}));  // nothing earlier: every silent rank
  std::vector<RankStack> both_waiting{python_stack(0, kWaitingRaw), python_stack(1, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(both_waiting, {0, 1}, {1}), (std::vector<int>{0, 1}));
  EXPECT_EQ(likely_stuck(partial, {0}, {1}), std::vector<int>{0});  // rank 1 moved on: not silent now
}

// A hang's root cause: the stuck rank past the deadline; else the rank the stacks single out
// among the quiet ones (its peer in the collective crossed the deadline one report earlier);
// else the first past the deadline.
TEST(StackReport, AHangsRootCauseIsTheRankTheStacksSingleOut) {
  EXPECT_EQ(hang_root_cause_rank({1}, {0, 1, 2}, {0}), 1);
  EXPECT_EQ(hang_root_cause_rank({1, 2}, {0, 1, 2}, {2}), 2);
  EXPECT_EQ(hang_root_cause_rank({0, 1, 2}, {0, 1, 2}, {2}), 2);  // every quiet rank waits: the one past it
  EXPECT_EQ(hang_root_cause_rank({3}, {3}, {3}), 3);
}

TEST(StackReport, EveryRankInACollectiveMeansEverySilentRankIsStuck) {
  std::vector<RankStack> stacks{python_stack(0, kWaitingRaw), python_stack(1, kWaitingRaw)};
  EXPECT_EQ(likely_stuck(stacks, {0, 1}), (std::vector<int>{0, 1}));
}

}  // namespace

