// libfake_nccl.so: a stand-in NCCL for testing the preload library on any machine. Its
// init functions return $FAKE_NCCL_INIT_RESULT (default 0; 7 = in progress, then
// ncclCommGetAsyncError settles to $FAKE_NCCL_ASYNC_RESULT, default 0). Error texts are fake.
// ncclCommInitRankConfig and ncclCommInitRankScalable call ncclCommInitRank through its public
// symbol on purpose: the preload library must still report that init once.
#include <cstdlib>
#include <string>

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
int dummy_comm;  // what a "created" communicator points at
}  // namespace

extern "C" {
struct FakeUniqueId {
  char internal[128];
};

int ncclCommInitRank(void** comm, int, FakeUniqueId, int) {
  int r = env_int("FAKE_NCCL_INIT_RESULT", 0);
  *comm = (r == 0 || r == 7) ? &dummy_comm : nullptr;
  return r;
}
int ncclCommInitRankConfig(void** comm, int n, FakeUniqueId id, int rank, void*) {
  return ncclCommInitRank(comm, n, id, rank);
}
int ncclCommInitRankScalable(void** comm, int n, int rank, int, FakeUniqueId* ids, void*) {
  return ncclCommInitRank(comm, n, ids[0], rank);
}
int ncclCommSplit(void*, int color, int, void** newcomm, void*) {
  int r = env_int("FAKE_NCCL_INIT_RESULT", 0);
  *newcomm = (color >= 0 && (r == 0 || r == 7)) ? &dummy_comm : nullptr;
  return r;
}
int ncclCommInitAll(void** comms, int, const int*) {
  int r = env_int("FAKE_NCCL_INIT_RESULT", 0);
  comms[0] = r == 0 ? &dummy_comm : nullptr;
  return r;
}
int ncclCommGetAsyncError(void*, int* state) {
  *state = env_int("FAKE_NCCL_ASYNC_RESULT", 0);
  return 0;
}
const char* ncclGetErrorString(int r) {
  static thread_local std::string s;
  s = "fake nccl error " + std::to_string(r);
  return s.c_str();
}
const char* ncclGetLastError(void*) { return "fake last error"; }
}
