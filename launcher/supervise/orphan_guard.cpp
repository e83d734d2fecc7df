// The guard loop: read "+PGID\n" / "-PGID\n" / "dDIR\n" / "s\n" records until EOF, then
// kill what is left, sweep the job tag (only when workers were started and the launcher did
// not sweep after them) and remove the directories.
//
// Where it is safe the guard is started with clone(CLONE_VM): it shares the launcher's
// memory instead of copying it. A forked copy costs every start ~3 ms on a VM: the
// copy, then a page fault for each page the launcher wrote again, then the copy's own.
// Sharing memory, the guard must never touch the launcher's heap, locks or thread state, so
// it runs on its own stack and state block and makes raw system calls only (raw_syscall.h).
// After the launcher is gone it kills the worker groups that way too; the sweep and the
// directory removal need the C++ runtime, so it then re-runs the launcher's program
// (run_guard_sweep), which gives it memory of its own. Safe from Linux 5.16: before that,
// a core dump of the launcher killed every process sharing its memory, the guard with it.
// There, in programs other than ddplaunch (the unit tests) and under valgrind, the guard is
// a forked copy of the launcher that sweeps in place, as before.
#include "supervise/orphan_guard.h"
#include "supervise/guard_record.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "supervise/descendant_sweep.h"
#include "supervise/raw_syscall.h"

namespace ddplaunch {

#if !defined(__x86_64__) && !defined(__aarch64__)
long raw::call(long number, long a, long b, long c, long d) noexcept {
  const long result = ::syscall(number, a, b, c, d);
  return result < 0 ? -errno : result;
}
#endif

namespace {

constexpr const char* kGuardTagVariable = "DDPLAUNCH_GUARD_TAG";  // the job tag, for the re-run sweep
constexpr std::size_t kMaxGroups = 4096;  // live worker groups at once (--nproc-per-node is at most 1024)
constexpr std::size_t kMaxDirectories = 8;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kRegionBytes = 256 << 10;  // guard page, state block, stack

// Everything the guard keeps: in its own mapping, never in the launcher's heap. The arrays
// are left uninitialised (only what the counts cover is read): zeroing them would fault in
// every page of the 60 KiB.
struct GuardState {
  // First, on one page: what the launcher sets and the guard reads at once.
  int read_fd;
  bool shares_memory;
  // A worker was started since the launcher last swept ("s"): if it dies now, its workers'
  // escaped descendants are the guard's to find.
  bool unswept_workers;
  std::size_t group_count;
  std::size_t directory_count;
  std::size_t pending_bytes;
  sigset_t mask;  // the launcher's signal mask, restored in a forked guard
  char tag[64];
  pid_t groups[kMaxGroups];
  char directories[kMaxDirectories][PATH_MAX];
  char pending[2 * PIPE_BUF];
  char environment_entry[128];  // kGuardTagVariable=tag, for the re-run
};
static_assert(sizeof(GuardState) + kPage + (64 << 10) <= kRegionBytes, "the guard's stack needs 64 KiB");

// The kernel's struct sigaction (x86-64 and the generic layout alike).
struct KernelSigaction {
  unsigned long handler;
  unsigned long flags;
  unsigned long restorer;
  unsigned long mask;
};
constexpr unsigned long kSigIgn = 1;

// Byte loops by hand: the guard calls nothing in libc while it shares the launcher's memory.
std::size_t length_of(const char* s) {
  std::size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

void copy_bytes(char* to, const char* from, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

bool same_bytes(const char* a, const char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// close_range(2) around `keep` (Linux 5.9); on older kernels one close per descriptor up to
// the limit, bounded.
void close_descriptors_from(int first, int keep) {
  auto close_span = [](unsigned from, unsigned to) {
    if (from > to) return;
    if (raw::call(SYS_close_range, from, to, 0) == 0) return;
    rlimit limit{};
    const unsigned highest =
        raw::call(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, reinterpret_cast<long>(&limit)) == 0 && limit.rlim_cur < (1U << 20)
            ? static_cast<unsigned>(limit.rlim_cur)
            : (1U << 20);
    for (unsigned fd = from; fd <= to && fd < highest; ++fd) raw::call(SYS_close, fd);
  };
  close_span(static_cast<unsigned>(first), static_cast<unsigned>(keep) - 1);
  close_span(static_cast<unsigned>(keep) + 1, ~0U);
}

// Ctrl-C reaches the launcher's whole process group; the guard must outlive it to act.
void ignore_stop_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
    KernelSigaction ignore{};
    ignore.handler = kSigIgn;
    raw::call(SYS_rt_sigaction, sig, reinterpret_cast<long>(&ignore), 0, 8);
  }
}

// One line from the launcher (supervise/guard_record.h: anything not NUL-led is ignored).
void handle_record(GuardState& g, const char* line, std::size_t length) {
  const GuardRecord r = parse_guard_record(line, length, PATH_MAX);
  switch (r.op) {
    case GuardRecord::Op::None: return;
    case GuardRecord::Op::Swept: g.unswept_workers = false; return;
    case GuardRecord::Op::Directory: {
      const std::size_t n = r.path_size;
      for (std::size_t i = 0; i < g.directory_count; ++i)
        if (length_of(g.directories[i]) == n && same_bytes(g.directories[i], r.path, n)) return;
      if (g.directory_count == kMaxDirectories) return;
      copy_bytes(g.directories[g.directory_count], r.path, n);
      g.directories[g.directory_count++][n] = '\0';
      return;
    }
    case GuardRecord::Op::Watch:
    case GuardRecord::Op::Forget: break;
  }
  const pid_t group = static_cast<pid_t>(r.group);
  std::size_t at = 0;
  while (at < g.group_count && g.groups[at] != group) ++at;
  if (r.op == GuardRecord::Op::Watch) {
    if (at == g.group_count && g.group_count < kMaxGroups) g.groups[g.group_count++] = group;
    g.unswept_workers = true;
  } else if (at < g.group_count) {
    g.groups[at] = g.groups[--g.group_count];
  }
}

// Until the launcher is gone (or closed its end at a clean exit).
void read_records(GuardState& g) {
  char buf[512];
  for (;;) {
    const long n = raw::call(SYS_read, g.read_fd, reinterpret_cast<long>(buf), sizeof buf);
    if (n == -EINTR) continue;
    if (n <= 0) return;
    if (g.pending_bytes + static_cast<std::size_t>(n) > sizeof g.pending) g.pending_bytes = 0;  // never: records are atomic
    copy_bytes(g.pending + g.pending_bytes, buf, static_cast<std::size_t>(n));
    g.pending_bytes += static_cast<std::size_t>(n);
    std::size_t start = 0;
    for (std::size_t i = 0; i < g.pending_bytes; ++i) {
      if (g.pending[i] != '\n') continue;
      handle_record(g, g.pending + start, i - start);
      start = i + 1;
    }
    for (std::size_t i = start; i < g.pending_bytes; ++i) g.pending[i - start] = g.pending[i];
    g.pending_bytes -= start;
  }
}

bool exists(const char* path) {
  alignas(16) char info[256];  // struct stat of either ABI fits
  return raw::call(SYS_newfstatat, AT_FDCWD, reinterpret_cast<long>(path), reinterpret_cast<long>(info),
                   AT_SYMLINK_NOFOLLOW) == 0;
}

// Only a directory the launcher made itself (ddplaunch-XXXXXX, not a symlink) is removed.
void remove_launcher_directory(const std::string& directory) {
  struct stat info {};
  if (std::filesystem::path(directory).filename().string().rfind("ddplaunch-", 0) != 0) return;
  if (::lstat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return;
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

// The launcher died without sweeping: the workers' descendants that left their group are
// found by the tag they inherited, in every process's environment (the guard is no
// subreaper, and the launcher's tree is gone with it). Not after a clean exit, nor when
// no worker was ever started (--version, a config error): nothing can carry the tag.
void sweep_and_remove(bool unswept_workers, const std::string& tag, const std::vector<std::string>& directories) {
  if (unswept_workers && !tag.empty()) sweep_job_processes(tag, {});
  for (const auto& directory : directories) remove_launcher_directory(directory);
}

// A guard sharing the launcher's memory: the rest in a program image of its own.
[[noreturn]] void rerun_for_sweep(GuardState& g) {
  const char* argv[3 + kMaxDirectories + 1] = {"ddplaunch-guard", kGuardSweepArgument,
                                               g.unswept_workers ? "1" : "0"};
  std::size_t argc = 3;
  for (std::size_t i = 0; i < g.directory_count; ++i) argv[argc++] = g.directories[i];
  argv[argc] = nullptr;
  const std::size_t name = length_of(kGuardTagVariable), tag = length_of(g.tag);
  copy_bytes(g.environment_entry, kGuardTagVariable, name);
  g.environment_entry[name] = '=';
  copy_bytes(g.environment_entry + name + 1, g.tag, tag + 1);
  const char* envp[] = {g.environment_entry, nullptr};
  raw::call(SYS_execve, reinterpret_cast<long>("/proc/self/exe"), reinterpret_cast<long>(argv),
            reinterpret_cast<long>(envp));
  raw::call(SYS_exit_group, 1);  // no /proc: the worker groups are killed, the rest cannot be done
  __builtin_unreachable();
}

int guard_main(void* state) {
  GuardState& g = *static_cast<GuardState*>(state);
  raw::call(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>("ddplaunch-guard"));
  ignore_stop_signals();
  // Close everything else the launcher had open so the guard holds no sockets or pipes.
  close_descriptors_from(3, g.read_fd);
  // Sharing memory, the guard keeps every signal blocked (SIGKILL cannot be): a handler it
  // inherited from the launcher must never run on its stack. A forked copy takes the
  // launcher's mask back, as it always did.
  if (!g.shares_memory) raw::call(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&g.mask), 0, 8);
  read_records(g);
  for (std::size_t i = 0; i < g.group_count; ++i) raw::call(SYS_kill, -g.groups[i], SIGKILL);
  bool directory_left = false;
  for (std::size_t i = 0; i < g.directory_count; ++i) directory_left = directory_left || exists(g.directories[i]);
  if (g.unswept_workers || directory_left) {
    if (g.shares_memory) rerun_for_sweep(g);
    std::vector<std::string> directories(g.directories, g.directories + g.directory_count);
    sweep_and_remove(g.unswept_workers, g.tag, directories);
  }
  raw::call(SYS_exit_group, 0);
  __builtin_unreachable();
}

// Linux >= 5.16: a core dump kills only the dumping thread group, not other processes that
// share its memory (the guard). Not under valgrind, which stops a program that starts such a
// process (it injects its vgpreload_core library through LD_PRELOAD).
bool guard_may_share_memory() {
  utsname u{};
  if (!raw::kAvailable || ::uname(&u) != 0) return false;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "/vgpreload_core")) return false;
  // "6.1.0-18-amd64": major.minor, read by hand: sscanf's code would be
  // pages touched at every start for this alone.
  const char* p = u.release;
  auto number = [&p] {
    int n = 0;
    for (; *p >= '0' && *p <= '9' && n < 100000; ++p) n = n * 10 + (*p - '0');
    return n;
  };
  const int major = number();
  if (*p++ != '.') return false;
  const int minor = number();
  return major > 5 || (major == 5 && minor >= 16);
}

}  // namespace

int run_guard_sweep(int argc, char** argv) {
  prctl(PR_SET_NAME, "ddplaunch-guard");
  const char* tag = std::getenv(kGuardTagVariable);
  std::string_view tag_text = tag ? tag : "";
  if (tag_text.find_first_not_of("0123456789abcdef") != std::string_view::npos) tag_text = {};
  std::vector<std::string> directories(argv + std::min(argc, 3), argv + argc);
  sweep_and_remove(argc > 2 && std::string_view(argv[2]) == "1", std::string(tag_text), directories);
  return 0;
}

std::string OrphanGuard::start(Sweep sweep) {
  job_tag_ = new_job_tag();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fmt::format("cannot create the guard pipe: {}", std::strerror(errno));
  // Never one of fds 0-2 (had one been closed): nothing written for the terminal may reach it.
  for (int& fd : fds) {
    if (fd > STDERR_FILENO) continue;
    const int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0) continue;
    close(fd);
    fd = moved;
  }
  void* region = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return fmt::format("cannot map the orphan guard's memory: {}", std::strerror(error));
  }
  mprotect(region, kPage, PROT_NONE);  // below the state block: a stack overflow faults
  auto* g = new (static_cast<char*>(region) + kPage) GuardState;
  g->read_fd = fds[0];
  g->group_count = g->directory_count = g->pending_bytes = 0;
  g->unswept_workers = false;
  g->shares_memory = sweep == Sweep::ByReexec && guard_may_share_memory();
  const std::size_t tag_bytes = std::min(job_tag_.size(), sizeof g->tag - 1);
  std::memcpy(g->tag, job_tag_.data(), tag_bytes);
  g->tag[tag_bytes] = '\0';
  // No signal reaches the guard before it has set its own dispositions.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &g->mask);
  sigset_t restore = g->mask;
  pid_t pid;
  if (g->shares_memory) {
    pid = clone(guard_main, static_cast<char*>(region) + kRegionBytes, CLONE_VM | SIGCHLD, g);
  } else {
    pid = fork();
    if (pid == 0) guard_main(g);
  }
  const int error = errno;
  pthread_sigmask(SIG_SETMASK, &restore, nullptr);
  if (pid < 0 || !g->shares_memory) munmap(region, kRegionBytes);  // shared: the guard's until it exits
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return fmt::format("cannot start the orphan guard: {}", std::strerror(error));
  }
  close(fds[0]);
  pipe_fd_ = fds[1];
  guard_pid_ = pid;
  return {};
}

void OrphanGuard::send(char op, const std::string& value) {
  if (pipe_fd_ < 0) return;
  const std::string record = guard_record(op, value);
  if (record.size() > PIPE_BUF || value.find('\n') != std::string::npos) return;  // atomic records only
  (void)!write(pipe_fd_, record.data(), record.size());
}

void OrphanGuard::watch(pid_t process_group) { send('+', std::to_string(process_group)); }
void OrphanGuard::forget(pid_t process_group) { send('-', std::to_string(process_group)); }
void OrphanGuard::remove_at_exit(const std::string& directory) { send('d', directory); }
void OrphanGuard::job_swept() { send('s', ""); }

}  // namespace ddplaunch
