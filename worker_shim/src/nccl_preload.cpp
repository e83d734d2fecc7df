// libddplaunch_nccl_preload.so: LD_PRELOAD'ed into a worker, it wraps NCCL communicator
// init (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitAll) and reports init_begin
// and init_ok / init_failed to ddplaunch, with NCCL's own error text. It forwards every
// call to the real NCCL unchanged and returns its result: the program behaves as without it.
// Built without nccl.h: the few types it needs are declared here, ABI-compatible with NCCL 2.
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "ddplaunch/shim.h"

namespace {

using ncclResult_t = int;             // NCCL's enum is int-sized
using ncclComm_t = struct ncclComm*;  // opaque
struct ncclUniqueId {
  char internal[128];
};
constexpr ncclResult_t kNcclSuccess = 0;
constexpr ncclResult_t kNcclSystemError = 2;
constexpr ncclResult_t kNcclInProgress = 7;  // non-blocking init still running: not a failure

using InitRankFn = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int);
using InitRankConfigFn = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int, void*);
using InitAllFn = ncclResult_t (*)(ncclComm_t*, int, const int*);
using ErrorStringFn = const char* (*)(ncclResult_t);
using LastErrorFn = const char* (*)(ncclComm_t);

namespace c = ddplaunch::contract;
namespace shim = ddplaunch::shim;

// The real NCCL symbol after this library in the lookup order, else anywhere in the process.
void* real_symbol(const char* name) {
  void* sym = dlsym(RTLD_NEXT, name);
  return sym ? sym : dlsym(RTLD_DEFAULT, name);
}

// For the init functions RTLD_DEFAULT would find our own wrapper: RTLD_NEXT only. Cached
// once found; not while missing, so a libnccl dlopen'ed later is still picked up.
template <typename Fn>
Fn real_init_function(std::atomic<void*>& cache, const char* name) {
  void* sym = cache.load(std::memory_order_acquire);
  if (!sym) {
    sym = dlsym(RTLD_NEXT, name);
    if (sym) cache.store(sym, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(sym);
}

ncclResult_t nccl_missing(const char* function) {
  shim::report(c::StatusEvent::InitBegin, function);
  shim::report(c::StatusEvent::InitFailed,
               std::string(function) +
                   " failed: NCCL was not found in this process (libddplaunch_nccl_preload.so "
                   "found no real " + function + " after it); the program called NCCL without "
                   "libnccl loaded — check that libnccl.so.2 is installed and on the library path");
  return kNcclSystemError;
}

// Reports the outcome of one init call. ncclInProgress (non-blocking init) is neither:
// the launcher falls back to its own init policy for that worker.
void report_result(const char* function, ncclResult_t res) {
  if (res == kNcclSuccess) {
    shim::report(c::StatusEvent::InitOk, function);
    return;
  }
  if (res == kNcclInProgress) return;
  auto error_string = reinterpret_cast<ErrorStringFn>(real_symbol("ncclGetErrorString"));
  auto last_error = reinterpret_cast<LastErrorFn>(real_symbol("ncclGetLastError"));
  const char* what = error_string ? error_string(res) : nullptr;
  // After a failed init the communicator may be freed or unset: ask for the global error.
  const char* last = last_error ? last_error(nullptr) : nullptr;
  std::string detail = std::string(function) + " failed: " +
                       (what ? what : "NCCL error " + std::to_string(res)) +
                       "; last error: " + (last && *last ? last : "(none reported by NCCL)");
  shim::report(c::StatusEvent::InitFailed, detail);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks,
                                                                     ncclUniqueId id, int rank) {
  static std::atomic<void*> cache{nullptr};
  auto real = real_init_function<InitRankFn>(cache, "ncclCommInitRank");
  if (!real) return nccl_missing("ncclCommInitRank");
  shim::report(c::StatusEvent::InitBegin, "ncclCommInitRank");
  ncclResult_t res = real(comm, nranks, id, rank);
  report_result("ncclCommInitRank", res);
  return res;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRankConfig(
    ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, void* config) {
  static std::atomic<void*> cache{nullptr};
  auto real = real_init_function<InitRankConfigFn>(cache, "ncclCommInitRankConfig");
  if (!real) return nccl_missing("ncclCommInitRankConfig");
  shim::report(c::StatusEvent::InitBegin, "ncclCommInitRankConfig");
  ncclResult_t res = real(comm, nranks, id, rank, config);
  report_result("ncclCommInitRankConfig", res);
  return res;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev,
                                                                    const int* devlist) {
  static std::atomic<void*> cache{nullptr};
  auto real = real_init_function<InitAllFn>(cache, "ncclCommInitAll");
  if (!real) return nccl_missing("ncclCommInitAll");
  shim::report(c::StatusEvent::InitBegin, "ncclCommInitAll");
  ncclResult_t res = real(comms, ndev, devlist);
  report_result("ncclCommInitAll", res);
  return res;
}

}  // extern "C"
