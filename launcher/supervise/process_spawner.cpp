// Worker spawn: clone(CLONE_VM | CLONE_VFORK) as posix_spawn does (no copy of the launcher's
// page tables, no copy-on-write faults before exec), with the setup posix_spawn cannot
// express: a new process group, parent-death signal, clean signal state, ptrace stop.
#include "supervise/process_spawner.h"

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "env/program_path.h"

namespace ddplaunch {

namespace {

// Marks every descriptor above stderr close-on-exec, so a worker starts with only 0/1/2
// whatever the launcher (or a library in it, e.g. Asio's sockets) forgot to mark (they close
// at exec; the child has its own descriptor table, so the launcher's are untouched).
void mark_inherited_descriptors_cloexec() {
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  rlimit limit{};  // kernels before 5.11: one fcntl per possible descriptor, bounded
  int highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (1U << 20) ? static_cast<int>(limit.rlim_cur)
                                                                                     : (1 << 20);
  for (int fd = 3; fd < highest; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Node mask for set_mempolicy: bit N = NUMA node N. Built before fork (no allocation in the child).
constexpr unsigned long kMaxNumaNodes = 1024;
struct NodeMask {
  unsigned long bits[kMaxNumaNodes / (8 * sizeof(unsigned long))] = {};
  int count = 0;
};

NodeMask node_mask(const std::vector<int>& nodes) {
  NodeMask mask;
  constexpr unsigned long kBitsPerWord = 8 * sizeof(unsigned long);
  for (int node : nodes)
    if (node >= 0 && static_cast<unsigned long>(node) < kMaxNumaNodes) {
      mask.bits[static_cast<unsigned long>(node) / kBitsPerWord] |= 1UL << (static_cast<unsigned long>(node) % kBitsPerWord);
      ++mask.count;
    }
  return mask;
}

// Placement (--numa-binding) in the child: affinity, then memory preferred on its nodes
// (preferred, not bound: a full node spills over instead of failing allocations). Both
// survive exec. A refused affinity is fatal: the plan checked the CPUs are allowed, so a
// refusal means the machine changed under us, and a worker off its CPUs would run slowly
// without anyone noticing.
void apply_placement(const cpu_set_t& cpus, bool bind_cpus, const NodeMask& memory) {
  if (bind_cpus && sched_setaffinity(0, sizeof cpus, &cpus) != 0) {
    static const char message[] = "ddplaunch: cannot set this worker's CPU affinity (--numa-binding)\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
  }
  if (memory.count == 0) return;
  const int mode = memory.count == 1 ? MPOL_PREFERRED : 5 /* MPOL_PREFERRED_MANY, Linux 5.15 */;
  // Older kernels refuse PREFERRED_MANY: the default policy (local node of the CPU) then
  // already keeps memory on the bound CPUs' nodes.
  (void)syscall(SYS_set_mempolicy, mode, memory.bits, kMaxNumaNodes);
}

// Everything the child needs, prepared before clone: the child shares the launcher's memory
// until it execs, so it allocates nothing and calls only async-signal-safe functions.
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  pid_t launcher_pid = 0;
  bool start_stopped = false;
  bool bind_cpus = false;
  cpu_set_t cpus{};
  NodeMask memory;
  sigset_t reset_signals{};  // set to their default in the child: see signals_to_reset
  int exec_errno = 0;  // written by the child when it cannot exec (shared memory)
};

// The signals a child sets to their default before it unblocks signals and execs: every one
// the launcher catches (its handler would run on the launcher's memory in the moment before
// exec), and those a worker must not inherit ignored. Read once per batch by the launcher's
// loop thread, the only one that installs handlers, instead of 64 queries in every child.
sigset_t signals_to_reset() {
  sigset_t reset;
  sigemptyset(&reset);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;  // glibc's own signals, SIGKILL, SIGSTOP
    const bool caught = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
    if (caught || sig == SIGPIPE || sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGCHLD ||
        sig == SIGQUIT)
      sigaddset(&reset, sig);
  }
  return reset;
}

// The child, until exec. Its signal handlers are the launcher's until reset here, and a
// handler run now would act on the launcher's memory: the launcher blocks every signal
// around clone, the child resets every caught signal to its default, then unblocks.
// (sigismember and signal are async-signal-safe; the set was read before clone.)
int run_child(void* arg) {
  auto* plan = static_cast<ChildPlan*>(arg);
  // dup2 onto itself would keep close-on-exec: then the flag is cleared instead.
  auto bind = [](int fd, int target) { return fd == target ? fcntl(fd, F_SETFD, 0) : dup2(fd, target); };
  if (bind(plan->stdin_fd, 0) < 0 || bind(plan->stdout_fd, 1) < 0 || bind(plan->stderr_fd, 2) < 0) {
    plan->exec_errno = errno;
    _exit(127);
  }
  // Its own session, so its own group (signals reach its whole tree) and no controlling
  // terminal: a rank's getpass or /dev/tty read cannot stop it on the launcher's terminal
  // (SIGTTOU/SIGTTIN in a background group) and falls back to its stdin, the console's.
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);     // launcher SIGKILLed → worker dies too
  // Where Yama restricts ptrace to ancestors, the launcher and its children (the gdb a person
  // asks for at the debug console, the stack tools) may still attach to the worker.
  prctl(PR_SET_PTRACER, plan->launcher_pid, 0, 0, 0);
  if (getppid() != plan->launcher_pid) _exit(127);  // launcher died before prctl took effect
  for (int sig = 1; sig < NSIG; ++sig)
    if (sigismember(&plan->reset_signals, sig) == 1) signal(sig, SIG_DFL);
  mark_inherited_descriptors_cloexec();
  apply_placement(plan->cpus, plan->bind_cpus, plan->memory);
  if (plan->start_stopped) ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);  // stops with SIGTRAP after exec
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(plan->path, plan->argv, plan->envp);
  plan->exec_errno = errno;
  _exit(127);
}

// The stack a child runs on until exec, one for a whole batch: a vfork'd child is done with
// it once clone returns, and unmapping memory another CPU has just used costs a TLB
// shoot-down (`perf trace -s`: an 8-worker start spent 0.7 ms in 9 munmap calls, now 0.2 in 2).
class ChildStack {
 public:
  ChildStack() : base_(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) {}
  ~ChildStack() {
    if (base_ != MAP_FAILED) munmap(base_, kBytes);
  }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  void* top() const { return base_ == MAP_FAILED ? nullptr : static_cast<char*>(base_) + kBytes; }

 private:
  static constexpr std::size_t kBytes = 256 << 10;
  void* base_;
};

// What every spawn of a batch shares.
struct BatchContext {
  sigset_t reset_signals = signals_to_reset();
  ChildStack stack;
};

// clone(CLONE_VM | CLONE_VFORK): returns once the child has exec'd or exited. -1 with errno
// when no child was created.
pid_t clone_and_exec(ChildPlan& plan, const ChildStack& stack) {
  if (stack.top() == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = clone(run_child, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = clone_errno;
  return pid;
}

bool make_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC) == 0; }

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// The ptrace'd child stopped at its first instruction after exec; hand it over stopped
// and untraced so a debugger can attach.
std::string detach_stopped(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
    return "the paused worker did not stop after exec";
  if (ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(SIGSTOP))) != 0)
    return fmt::format("could not detach from the paused worker: {}", std::strerror(errno));
  // Return only once the SIGSTOP has taken effect, so "paused" is true when we say it.
  // WNOWAIT: the stop (or an exit) stays reportable to the supervisor's own waits.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WEXITED | WNOWAIT) != 0)
    return fmt::format("the paused worker could not be waited for: {}", std::strerror(errno));
  return {};
}

SpawnedProcess spawn_one(const SpawnRequest& request, const BatchContext& batch) {
  SpawnedProcess out;
  if (request.argv.empty()) {
    out.error = "no program given";
    return out;
  }
  std::string exe = request.argv[0];
  if (exe.find('/') == std::string::npos) {
    std::string found = find_program(exe);
    if (found.empty()) {
      out.error = fmt::format("program '{}' was not found on PATH; give its full path", exe);
      return out;
    }
    exe = found;
  } else if (access(exe.c_str(), X_OK) != 0) {
    out.error_number = errno;
    out.error = fmt::format("program '{}' cannot be executed: {}", exe, std::strerror(errno));
    return out;
  }

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
  if (!make_pipe(out_pipe) || !make_pipe(err_pipe) || (request.stdin_pipe && !make_pipe(in_pipe))) {
    out.error_number = errno;
    out.error = fmt::format("cannot create output pipes: {}", std::strerror(errno));
    close_fd(out_pipe[0]), close_fd(out_pipe[1]), close_fd(err_pipe[0]), close_fd(err_pipe[1]);
    close_fd(in_pipe[0]), close_fd(in_pipe[1]);
    return out;
  }

  // The environment, last value of a repeated key winning; argv and envp as exec wants them.
  std::vector<std::string> env_entries;
  std::unordered_map<std::string, std::size_t> env_index;
  for (const auto& entry : request.env) {
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    auto [it, fresh] = env_index.emplace(entry.substr(0, eq), env_entries.size());
    if (fresh) env_entries.push_back(entry);
    else env_entries[it->second] = entry;
  }
  std::vector<char*> envp;
  for (auto& entry : env_entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings(request.argv);
  std::vector<char*> argv;
  for (auto& arg : arg_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int null_fd = -1;
  if (!request.stdin_pipe && !request.stdin_inherit && (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    out.error_number = errno;
    out.error = fmt::format("cannot open /dev/null for the worker's stdin: {}", std::strerror(errno));
    close_fd(out_pipe[0]), close_fd(out_pipe[1]), close_fd(err_pipe[0]), close_fd(err_pipe[1]);
    return out;
  }
  ChildPlan plan;
  plan.path = exe.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.stdin_fd = request.stdin_pipe ? in_pipe[0] : request.stdin_inherit ? STDIN_FILENO : null_fd;
  plan.stdout_fd = out_pipe[1];
  plan.stderr_fd = err_pipe[1];
  plan.launcher_pid = getpid();
  plan.start_stopped = request.start_stopped;
  plan.bind_cpus = !request.cpus.empty();
  CPU_ZERO(&plan.cpus);
  for (int cpu : request.cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &plan.cpus);
  plan.memory = node_mask(request.memory_nodes);
  plan.reset_signals = batch.reset_signals;
  const pid_t pid = clone_and_exec(plan, batch.stack);
  const int spawn_errno = pid < 0 ? errno : plan.exec_errno;
  if (pid > 0 && plan.exec_errno != 0) waitpid(pid, nullptr, 0);  // it exited without exec: reap it here
  close_fd(null_fd);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  close_fd(in_pipe[0]);
  if (pid <= 0 || plan.exec_errno != 0) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    close_fd(in_pipe[1]);
    out.error_number = spawn_errno;
    out.error = fmt::format("cannot start '{}': {}", exe, spawn_errno ? std::strerror(spawn_errno) : "unknown error");
    return out;
  }
  out.pid = pid;
  out.stdout_fd = out_pipe[0];
  out.stderr_fd = err_pipe[0];
  out.stdin_fd = in_pipe[1];
  if (request.start_stopped) {
    out.error = detach_stopped(out.pid);
    if (!out.error.empty()) {  // never hand back a half-started worker
      kill(out.pid, SIGKILL);
      waitpid(out.pid, nullptr, __WALL);
      close_fd(out.stdout_fd);
      close_fd(out.stderr_fd);
      close_fd(out.stdin_fd);
      out.pid = -1;
    }
  }
  return out;
}

}  // namespace

std::string describe_resource_shortage(int error_number) {
  switch (error_number) {
    case EAGAIN: return "the system is out of processes or memory (EAGAIN)";
    case ENOMEM: return "the system is out of memory (ENOMEM)";
    case EMFILE: return "the launcher is out of file descriptors (EMFILE)";
    case ENFILE: return "the system is out of file descriptors (ENFILE)";
    case E2BIG: return "the argument list and environment are too large (E2BIG)";
    default: return {};
  }
}

bool is_resource_shortage(int error_number) { return !describe_resource_shortage(error_number).empty(); }

SpawnedProcess spawn_worker_process(const SpawnRequest& request) {
  const BatchContext batch;
  return spawn_one(request, batch);
}

std::vector<SpawnedProcess> spawn_worker_processes(const std::vector<SpawnRequest>& requests) {
  std::vector<SpawnedProcess> spawned;
  const BatchContext batch;
  for (const SpawnRequest& request : requests) {
    spawned.push_back(spawn_one(request, batch));
    if (spawned.back().pid < 0) break;
  }
  return spawned;
}

}  // namespace ddplaunch
