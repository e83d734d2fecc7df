// nccl_probe: a one-rank NCCL communicator init and nothing else. With
// LD_PRELOAD=libddplaunch_nccl_preload.so it shows what the preload reports for a real
// NCCL init (it does not use the shim itself). Exit 0 on success, 1 on failure.
#include <nccl.h>

#include <cstdio>

int main() {
  ncclUniqueId id;
  ncclResult_t res = ncclGetUniqueId(&id);
  if (res != ncclSuccess) {
    std::printf("ncclGetUniqueId: %s (%s)\n", ncclGetErrorString(res), ncclGetLastError(nullptr));
    return 1;
  }
  ncclComm_t comm = nullptr;
  res = ncclCommInitRank(&comm, 1, id, 0);
  std::printf("ncclCommInitRank: %s (last error: %s)\n", ncclGetErrorString(res),
              ncclGetLastError(nullptr));
  std::fflush(stdout);
  if (res != ncclSuccess) return 1;
  ncclCommDestroy(comm);
  return 0;
}
