// fake_nccl_probe <rank|config|all|scalable|split> [N]: N (default 1) communicator inits
// through libfake_nccl.so (no nccl.h), each polling ncclCommGetAsyncError while in progress,
// as torch 2.x creates one per process group lazily. Exits with the last init's result so a
// test can check the preload library passes results through unchanged.
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
struct FakeUniqueId {
  char internal[128];
};
int ncclCommInitRank(void** comm, int nranks, FakeUniqueId id, int rank);
int ncclCommInitRankConfig(void** comm, int nranks, FakeUniqueId id, int rank, void* config);
int ncclCommInitAll(void** comms, int ndev, const int* devlist);
int ncclCommGetAsyncError(void* comm, int* state);
int ncclCommInitRankScalable(void** comm, int nranks, int rank, int nids, FakeUniqueId* ids, void* config);
int ncclCommSplit(void* comm, int color, int key, void** newcomm, void* config);
}

int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "rank";
  const int count = argc > 2 ? std::atoi(argv[2]) : 1;
  FakeUniqueId id{};
  int res = 0;
  for (int n = 0; n < count; ++n) {
    void* comm = nullptr;
    if (std::strcmp(which, "config") == 0) res = ncclCommInitRankConfig(&comm, 1, id, 0, nullptr);
    else if (std::strcmp(which, "all") == 0) res = ncclCommInitAll(&comm, 1, nullptr);
    else if (std::strcmp(which, "scalable") == 0) res = ncclCommInitRankScalable(&comm, 1, 0, 1, &id, nullptr);
    else if (std::strcmp(which, "split") == 0) res = ncclCommSplit(&id, 0, 0, &comm, nullptr);
    else res = ncclCommInitRank(&comm, 1, id, 0);
    int state = res;
    for (int i = 0; state == 7 && i < 100; ++i) ncclCommGetAsyncError(comm, &state);
    std::printf("init=%d settled=%d\n", res, state);
  }
  return res;
}
