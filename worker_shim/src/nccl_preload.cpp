// libddplaunch_nccl_preload.so: LD_PRELOAD'ed into a worker, it wraps NCCL communicator
// creation (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitRankScalable,
// ncclCommInitAll, ncclCommSplit; ncclGetUniqueId when it fails) and reports init_begin and
// init_ok / init_failed to ddplaunch for EVERY call, with NCCL's own error text (a
// non-blocking init is settled when ncclCommGetAsyncError first shows its outcome): torch 2.x
// creates communicators lazily, at the first collective and for each new sub-group, and each
// one is init again.
// It forwards every call to the real NCCL unchanged and returns its result: the program
// behaves as without it. Nothing runs at load time (no constructor, no dlopen): the real
// functions are found with dlsym(RTLD_NEXT) on first call, so a program that never calls
// NCCL never gets libnccl or libcuda mapped and pays only the dynamic loader's mapping of
// this small library (BENCHMARKS.md, "NCCL preload start-up cost").
// Built without nccl.h: the few types it needs are declared here, ABI-compatible with NCCL 2.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

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
using InitScalableFn = ncclResult_t (*)(ncclComm_t*, int, int, int, ncclUniqueId*, void*);
using SplitFn = ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t*, void*);
using GetUniqueIdFn = ncclResult_t (*)(ncclUniqueId*);
using ErrorStringFn = const char* (*)(ncclResult_t);
using LastErrorFn = const char* (*)(ncclComm_t);
using AsyncErrorFn = ncclResult_t (*)(ncclComm_t, ncclResult_t*);

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
                   "libnccl loaded; check that libnccl.so.2 is installed and on the library path");
  return kNcclSystemError;
}

void report_failure(const char* function, ncclResult_t res, ncclComm_t comm) noexcept try {
  auto error_string = reinterpret_cast<ErrorStringFn>(real_symbol("ncclGetErrorString"));
  auto last_error = reinterpret_cast<LastErrorFn>(real_symbol("ncclGetLastError"));
  const char* what = error_string ? error_string(res) : nullptr;
  const char* last = last_error ? last_error(comm) : nullptr;
  std::string detail = std::string(function) + " failed: " +
                       (what ? what : "NCCL error " + std::to_string(res)) +
                       "; last error: " + (last && *last ? last : "(none reported by NCCL)");
  shim::report(c::StatusEvent::InitFailed, detail);
} catch (...) {  // out of memory: unreported, the program is unaffected
}

// Communicators whose non-blocking init returned ncclInProgress, with the function that
// started it; settled (and reported) by the first conclusive ncclCommGetAsyncError.
struct PendingInit {
  ncclComm_t comm;
  const char* function;
};
struct PendingInits {
  std::mutex mutex;
  std::vector<PendingInit> inits;
};
// Never destroyed: NCCL threads may still call in while the process runs its exit handlers.
PendingInits& pending() {
  static PendingInits* p = new PendingInits;
  return *p;
}

// Reports the outcome of one init call. ncclInProgress is not an outcome yet.
void report_result(const char* function, ncclResult_t res, ncclComm_t* comm) {
  if (res == kNcclSuccess) {
    shim::report(c::StatusEvent::InitOk, function);
  } else if (res == kNcclInProgress) {
    if (!comm || !*comm) return;
    PendingInits& p = pending();
    std::lock_guard lock(p.mutex);
    try {
      p.inits.push_back({*comm, function});
    } catch (...) {  // out of memory: this init goes unreported, the program is unaffected
    }
  } else {
    // After a failed init the communicator may be freed or unset: ask for the global error.
    report_failure(function, res, nullptr);
  }
}

// Settles a pending non-blocking init of `comm` once its async state is conclusive.
void settle_pending(ncclComm_t comm, ncclResult_t state) {
  if (state == kNcclInProgress) return;
  const char* function = nullptr;
  {
    PendingInits& p = pending();
    std::lock_guard lock(p.mutex);
    auto it = std::find_if(p.inits.begin(), p.inits.end(),
                           [comm](const PendingInit& i) { return i.comm == comm; });
    if (it == p.inits.end()) return;
    function = it->function;
    p.inits.erase(it);
  }
  if (state == kNcclSuccess) shim::report(c::StatusEvent::InitOk, function);
  else report_failure(function, state, comm);
}

// An NCCL that implements one init function by calling another through its public symbol
// would reach our wrapper twice: only the outermost call on a thread reports.
thread_local int init_depth = 0;
struct InitScope {
  InitScope() { ++init_depth; }
  ~InitScope() { --init_depth; }
  bool outermost() const { return init_depth == 1; }
};

// The one shape of every wrapped init function: find the real one, report init_begin,
// forward unchanged, report the outcome (a non-blocking init is settled later on the
// communicator `result_comm()` names after the call). Only the outermost call on a thread
// reports (see InitScope).
template <typename Fn, typename ResultComm, typename... Args>
ncclResult_t forward_init(std::atomic<void*>& cache, const char* function,
                          ResultComm result_comm, Args... args) {
  auto real = real_init_function<Fn>(cache, function);
  if (!real) return nccl_missing(function);
  InitScope scope;
  if (!scope.outermost()) return real(args...);
  shim::report(c::StatusEvent::InitBegin, function);
  ncclResult_t res = real(args...);
  report_result(function, res, result_comm());
  return res;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks,
                                                                     ncclUniqueId id, int rank) {
  static std::atomic<void*> cache{nullptr};
  return forward_init<InitRankFn>(cache, "ncclCommInitRank", [comm] { return comm; }, comm, nranks, id, rank);
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRankConfig(
    ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, void* config) {
  static std::atomic<void*> cache{nullptr};
  return forward_init<InitRankConfigFn>(cache, "ncclCommInitRankConfig", [comm] { return comm; }, comm, nranks, id,
                                        rank, config);
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev,
                                                                    const int* devlist) {
  static std::atomic<void*> cache{nullptr};
  // Always blocking: nothing to settle later.
  return forward_init<InitAllFn>(cache, "ncclCommInitAll", [] { return static_cast<ncclComm_t*>(nullptr); }, comms, ndev, devlist);
}

// NCCL 2.23+: one communicator from several unique ids (large jobs).
__attribute__((visibility("default"))) ncclResult_t ncclCommInitRankScalable(
    ncclComm_t* comm, int nranks, int rank, int nids, ncclUniqueId* ids, void* config) {
  static std::atomic<void*> cache{nullptr};
  return forward_init<InitScalableFn>(cache, "ncclCommInitRankScalable", [comm] { return comm; }, comm, nranks, rank,
                                      nids, ids, config);
}

// The unique id is the first step of an init: ncclGetUniqueId sets up NCCL's bootstrap
// network (NCCL_SOCKET_IFNAME, the bootstrap listener), and a wrong interface fails here,
// before any communicator exists. Only a failure is reported (init_begin + init_failed),
// so a success changes nothing: the communicator creation that follows reports itself.
__attribute__((visibility("default"))) ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  static std::atomic<void*> cache{nullptr};
  auto real = real_init_function<GetUniqueIdFn>(cache, "ncclGetUniqueId");
  if (!real) return nccl_missing("ncclGetUniqueId");
  ncclResult_t res = real(id);
  if (res != kNcclSuccess) {
    shim::report(c::StatusEvent::InitBegin, "ncclGetUniqueId");
    report_failure("ncclGetUniqueId", res, nullptr);
  }
  return res;
}

// A new communicator from an existing one (torch 2.x new_group with a split-capable NCCL):
// as much an init as ncclCommInitRank, collective over the parent's ranks, and as able to hang.
__attribute__((visibility("default"))) ncclResult_t ncclCommSplit(ncclComm_t comm, int color,
                                                                  int key, ncclComm_t* newcomm,
                                                                  void* config) {
  static std::atomic<void*> cache{nullptr};
  // NCCL_SPLIT_NOCOLOR creates no communicator: a non-blocking split settles on the parent.
  auto settles_on = [&comm, newcomm] { return newcomm && *newcomm ? newcomm : &comm; };
  return forward_init<SplitFn>(cache, "ncclCommSplit", settles_on, comm, color, key, newcomm,
                               config);
}

__attribute__((visibility("default"))) ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                                                          ncclResult_t* state) {
  static std::atomic<void*> cache{nullptr};
  auto real = real_init_function<AsyncErrorFn>(cache, "ncclCommGetAsyncError");
  if (!real) return kNcclSystemError;  // no NCCL: the program cannot hold a communicator
  ncclResult_t res = real(comm, state);
  if (res == kNcclSuccess && state) settle_pending(comm, *state);
  return res;
}

}  // extern "C"
