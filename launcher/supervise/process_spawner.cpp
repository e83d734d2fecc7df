// Boost.Process v1 spawn with an exec-setup hook for what the standard options cannot
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

#include <csignal>
#include <cstring>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>
#include <fmt/format.h>

#include "env/program_path.h"

namespace bp = boost::process;

namespace ddplaunch {

namespace {

// Marks every descriptor above stderr close-on-exec, so a worker starts with only 0/1/2
// whatever the launcher (or a library in it, e.g. Asio's sockets) forgot to mark. Not
// closed here: Boost.Process reports exec errors on a close-on-exec pipe of its own.
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

// Runs in the forked child before exec: only async-signal-safe calls here.
struct WorkerExecSetup : bp::extend::handler {
  pid_t launcher_pid;
  bool start_stopped;
  bool bind_cpus = false;
  cpu_set_t cpus{};
  NodeMask memory;

  template <typename Executor>
  void on_exec_setup(Executor&) const {
    setpgid(0, 0);                        // own group: signals reach its whole tree
    prctl(PR_SET_PDEATHSIG, SIGKILL);     // launcher SIGKILLed → worker dies too
    if (getppid() != launcher_pid) _exit(127);  // launcher died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGQUIT}) signal(sig, SIG_DFL);
    mark_inherited_descriptors_cloexec();
    apply_placement(cpus, bind_cpus, memory);
    if (start_stopped) ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);  // stops with SIGTRAP after exec
  }
};

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

  bp::environment env;
  env.clear();
  for (const auto& entry : request.env) {
    auto eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  std::vector<std::string> args(request.argv.begin() + 1, request.argv.end());

  std::error_code ec;
  WorkerExecSetup setup;
  setup.launcher_pid = getpid();
  setup.start_stopped = request.start_stopped;
  setup.bind_cpus = !request.cpus.empty();
  CPU_ZERO(&setup.cpus);
  for (int cpu : request.cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &setup.cpus);
  setup.memory = node_mask(request.memory_nodes);
  errno = 0;
  bp::child child = request.stdin_pipe
                        ? bp::child(bp::exe = exe, bp::args = args, env, bp::posix::fd.bind(0, in_pipe[0]),
                                    bp::posix::fd.bind(1, out_pipe[1]), bp::posix::fd.bind(2, err_pipe[1]), setup, ec)
                        : bp::child(bp::exe = exe, bp::args = args, env, bp::std_in < bp::null,
                                    bp::posix::fd.bind(1, out_pipe[1]), bp::posix::fd.bind(2, err_pipe[1]), setup, ec);
  // Boost.Process can fail before fork (its own pipe: EMFILE) without setting `ec`.
  const int spawn_errno = errno;
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  close_fd(in_pipe[0]);
  if (ec || child.id() <= 0) {
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    close_fd(in_pipe[1]);
    out.error_number = ec ? ec.value() : spawn_errno;
    out.error = fmt::format("cannot start '{}': {}", exe,
                            ec ? ec.message() : out.error_number ? std::strerror(out.error_number) : "unknown error");
    return out;
  }
  out.pid = child.id();
  child.detach();  // we reap it ourselves (GroupSupervisor), by pid
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

}  // namespace ddplaunch
