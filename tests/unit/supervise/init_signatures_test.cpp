// Init-error signatures: which lines of a worker's output mark a failure of the
// distributed init (NCCL, c10d, Gloo) rather than of the training itself.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <string_view>

#include "supervise/init_signatures.h"

using namespace ddplaunch;

TEST(InitSignatures, RecognisesNcclAndC10dInitErrors) {
  const char* init_errors[] = {
      "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error",
      "torch.distributed.DistNetworkError: Connection reset by peer",
      "RuntimeError: The server socket has failed to listen on any local network address. EADDRINUSE",
      "ncclCommInitRank failed: unhandled cuda error",
      "[E socket.cpp:860] [c10d] The client socket has timed out after 1800s while trying to connect to (10.0.0.1, 29500).",
      "RuntimeError: Socket Timeout",
      "NCCL WARN Bootstrap : no socket interface found",
      "RuntimeError: Gloo connectFullMesh failed with ...",
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 1",
  };
  for (const char* line : init_errors) EXPECT_TRUE(match_init_signature(std::string_view(line))) << line;
}

TEST(InitSignatures, IgnoresOrdinaryTrainingOutput) {
  for (const char* line : {"step 10 loss 0.25", "CUDA out of memory. Tried to allocate 2.00 GiB",
                           "ValueError: Expected input batch_size (32) to match target batch_size (16)"})
    EXPECT_FALSE(match_init_signature(std::string_view(line))) << line;
  EXPECT_TRUE(match_init_signature(std::deque<std::string>{"ok", "NCCL error: unhandled system error"}));
}

