// fake_nccl_probe <rank|config|all>: one communicator init through libfake_nccl.so (no
// nccl.h), polling ncclCommGetAsyncError while in progress. Exits with the init's result so
// a test can check the preload library passes results through unchanged.
#include <cstdio>
#include <cstring>

extern "C" {
struct FakeUniqueId {
  char internal[128];
};
int ncclCommInitRank(void** comm, int nranks, FakeUniqueId id, int rank);
int ncclCommInitRankConfig(void** comm, int nranks, FakeUniqueId id, int rank, void* config);
int ncclCommInitAll(void** comms, int ndev, const int* devlist);
int ncclCommGetAsyncError(void* comm, int* state);
}

int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "rank";
  FakeUniqueId id{};
  void* comm = nullptr;
  int res = 0;
  if (std::strcmp(which, "config") == 0) res = ncclCommInitRankConfig(&comm, 1, id, 0, nullptr);
  else if (std::strcmp(which, "all") == 0) res = ncclCommInitAll(&comm, 1, nullptr);
  else res = ncclCommInitRank(&comm, 1, id, 0);
  int state = res;
  for (int i = 0; state == 7 && i < 100; ++i) ncclCommGetAsyncError(comm, &state);
  std::printf("init=%d settled=%d\n", res, state);
  return res;
}
