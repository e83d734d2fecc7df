// rendezvous_bench: K simulated nodes join one rendezvous server on loopback; prints the time
// from the first join() to the last Assignment received, and where that time went.
//
// The server runs in this process. The simulated nodes (one Client each) run in P forked client
// processes, each with one io_context, at most kMaxClientsPerProcess per process by default.
// Each process holds only its own sockets: the server one per node (16384 fit under an
// open-file hard limit of 20000), a client process its share. Client process p talks to the
// server at 127.0.0.(p+1) (server_address). All client processes wait for one start instant on
// CLOCK_MONOTONIC (one clock for every process of the machine), so every instant below,
// whichever process took it, is on the same time line.
//
// Usage: rendezvous_bench --nodes K [--procs P] [--timeout-ms T] [--rest-ms R] [--pin]. Driven by bench/run
// rendezvous. With --rest-ms, every node stays joined after its assignment and nothing happens
// but the keep-alive traffic (heartbeats): after a settling second, the CPU the server and the
// client processes spend in R ms is measured (the job at rest). With --pin the server keeps CPU 0
// to itself and the client processes run on the other CPUs (the simulated nodes off the master's core).
// Output, one line (times in ms after the earliest join() of any client process):
//   join_to_last_assignment_ms  the last Assignment received by any client process
//   join_to_plan_ms             the server called plan(): every node has joined
//   joins_issued_ms             the last client process returned from join() for all its nodes
//   assignments_sent_ms         the server had queued (and mostly written) every Assignment
//   first_assignment_ms         the first Assignment received by any client process
//   server_cpu_ms, clients_cpu_ms  CPU time (user + system) of the server / all client processes
//   server_user_ms, server_system_ms  the server's CPU time split: user space, kernel
//   rest_server_cpu_pct         --rest-ms: the server's CPU at rest, in % of one core
//   rest_node_cpu_pct           --rest-ms: the client processes' CPU at rest per node, in % of one core
//   listen_overflows            connections the kernel refused because the listener's accept queue
//                               was full (each costs its client a SYN retransmission: 1 s or more);
//                               counted for the whole machine, absent where /proc/net/netstat is not
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "ddplaunch/rendezvous/rendezvous.h"

using namespace ddplaunch::rendezvous;
using namespace std::chrono_literals;

namespace {

constexpr int kMaxClientsPerProcess = 4096;
constexpr int kMaxClientProcesses = 254;  // each has a server address of its own: 127.0.0.1 to .254
constexpr rlim_t kSpareFds = 64;  // pipes, stdio, listeners, libraries
// The client processes are told the start instant this long before it, so that all of them
// are waiting for it (not still reading the pipe) when it comes.
constexpr std::int64_t kStartLeadNs = 20'000'000;
// --rest-ms: how long after its assignments a process waits before it measures the rest.
constexpr std::chrono::milliseconds kRestSettle{1000};

std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// This process's CPU time so far: in user space, in the kernel (system calls, and on loopback
// the receiving side of what it sends).
struct CpuTime {
  std::int64_t user_ns = 0, system_ns = 0;
  std::int64_t total() const { return user_ns + system_ns; }
};

CpuTime cpu_time() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ns = [](const timeval& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_usec * 1000; };
  return {ns(u.ru_utime), ns(u.ru_stime)};
}

std::int64_t cpu_ns() { return cpu_time().total(); }

// --pin: the calling process runs only on CPUs `first` .. `last`; false when that fails.
bool pin_to_cpus(int first, int last) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu = first; cpu <= last; ++cpu) CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

double ms_between(std::int64_t from_ns, std::int64_t to_ns) { return static_cast<double>(to_ns - from_ns) / 1e6; }

// Reads exactly n bytes, waiting at most until deadline_ns; false on timeout, error or EOF.
bool read_exactly(int fd, void* data, std::size_t n, std::int64_t deadline_ns) {
  auto* at = static_cast<char*>(data);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int wait_ms = static_cast<int>(std::max<std::int64_t>(0, (deadline_ns - monotonic_ns()) / 1'000'000));
    if (::poll(&pfd, 1, wait_ms) <= 0) return false;
    ssize_t r = ::read(fd, at, n);
    if (r <= 0) return false;
    at += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// Pipe messages are far below PIPE_BUF: one write() delivers them whole.
template <typename T>
bool write_message(int fd, const T& message) {
  return ::write(fd, &message, sizeof message) == static_cast<ssize_t>(sizeof message);
}

// What one client process measured, on the shared monotonic clock.
struct ClientReport {
  std::int64_t first_join_ns = 0;          // just before its first join()
  std::int64_t joins_issued_ns = 0;        // its last join() returned
  std::int64_t first_assignment_ns = 0;
  std::int64_t last_assignment_ns = 0;
  std::int64_t cpu_ns = 0;                 // from the first join() to the end of the wait
  std::int64_t rest_cpu_ns = 0;            // --rest-ms: in the rest window
  std::int32_t assigned = 0, failed = 0;
};

// TcpExt ListenOverflows from /proc/net/netstat (a header line of names, then one of values).
std::optional<long long> listen_overflows() {
  std::ifstream netstat("/proc/net/netstat");
  std::string names, values;
  while (std::getline(netstat, names) && std::getline(netstat, values)) {
    if (names.rfind("TcpExt:", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value)
      if (name == "ListenOverflows") return std::stoll(value);
  }
  return std::nullopt;
}

// A client process: receives the server's port, builds its clients, says it is ready, waits
// for the start instant, joins all its clients at once and reports what it measured.
int run_client_process(const std::string& server_address, int first_node, int count, int from_parent, int to_parent,
                       std::chrono::milliseconds timeout, std::chrono::milliseconds rest) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a server process that dies takes its client processes along
  const std::int64_t setup_deadline = monotonic_ns() + timeout.count() * 1'000'000;
  std::uint16_t port = 0;
  if (!read_exactly(from_parent, &port, sizeof port, setup_deadline)) return 2;
  boost::asio::io_context io;
  std::vector<std::unique_ptr<Client>> clients;
  ClientReport report;
  std::string first_error;
  for (int i = 0; i < count; ++i) {
    ClientOptions o;
    o.job_id = "bench";
    o.host = server_address;
    o.port = port;
    o.retry_interval = 20ms;
    o.join_timeout = timeout;
    ClientCallbacks cb;
    cb.on_assignment = [&](const Assignment&) {
      report.last_assignment_ns = monotonic_ns();
      if (report.assigned++ == 0) report.first_assignment_ns = report.last_assignment_ns;
    };
    auto fail = [&](const std::string& why) { if (report.failed++ == 0) first_error = why; };
    cb.on_refused = fail;
    cb.on_lost = fail;
    clients.push_back(std::make_unique<Client>(io, o, std::move(cb)));
  }
  std::vector<NodeFacts> facts(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    facts[i].hostname = "sim" + std::to_string(first_node + i);
    facts[i].nproc = 8;
    facts[i].gpu_count = 8;
  }
  const char ready = 'r';
  std::int64_t start_ns = 0;
  if (!write_message(to_parent, ready) || !read_exactly(from_parent, &start_ns, sizeof start_ns, setup_deadline))
    return 2;
  const timespec start{static_cast<time_t>(start_ns / 1'000'000'000), static_cast<long>(start_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, nullptr) == EINTR) {}
  const std::int64_t cpu_at_start = cpu_ns();
  report.first_join_ns = monotonic_ns();
  for (int i = 0; i < count; ++i) clients[i]->join(facts[i]);
  report.joins_issued_ns = monotonic_ns();
  const std::int64_t deadline = report.first_join_ns + timeout.count() * 1'000'000;
  while (report.assigned + report.failed < count && monotonic_ns() < deadline) io.run_for(10ms);
  report.cpu_ns = cpu_ns() - cpu_at_start;
  if (rest.count() > 0 && report.assigned == count) {  // the job at rest: joined, nothing to say
    io.run_for(kRestSettle);
    const std::int64_t rest_cpu_at_start = cpu_ns();
    io.run_for(rest);
    report.rest_cpu_ns = cpu_ns() - rest_cpu_at_start;
  }
  if (report.failed) std::fprintf(stderr, "bench: %d clients failed, first: %s\n", report.failed, first_error.c_str());
  if (report.assigned + report.failed < count)
    std::fprintf(stderr, "bench: %d clients had no answer within --timeout-ms %lld\n",
                 count - report.assigned - report.failed, static_cast<long long>(timeout.count()));
  const bool reported = write_message(to_parent, report);
  for (auto& c : clients) c->close();
  return reported && report.assigned == count ? 0 : 1;
}

struct ClientProcess {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
  bool reported = false;
  ClientReport report;
};

// Client process p connects to 127.0.0.(p+1), an address of its own (the server listens on
// all of them, one port). All simulated nodes share the source address 127.0.0.1; to a single
// destination their connections would need 16384 distinct source ports, and the kernel's
// search for a free port (__inet_hash_connect) grows with the ports already taken: at 16384
// nodes most of the clients' CPU went there. Real nodes, each with its own address, never
// meet that cost.
std::string server_address(int client_process) { return "127.0.0." + std::to_string(client_process + 1); }

void usage() { std::fprintf(stderr, "usage: rendezvous_bench --nodes K [--procs P] [--timeout-ms T] [--rest-ms R] [--pin]\n"); }

}  // namespace

int main(int argc, char** argv) {
  int nodes = 64, procs = 0;
  std::chrono::milliseconds timeout = 30000ms, rest = 0ms;
  bool pin = false;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--pin") { pin = true; --i; continue; }
    if (i + 1 >= argc) { usage(); return 2; }
    if (k == "--nodes") nodes = std::atoi(argv[i + 1]);
    else if (k == "--procs") procs = std::atoi(argv[i + 1]);
    else if (k == "--timeout-ms") timeout = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else if (k == "--rest-ms") rest = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else { usage(); return 2; }
  }
  if (procs == 0) procs = (nodes + kMaxClientsPerProcess - 1) / kMaxClientsPerProcess;
  if (nodes < 1 || procs < 1 || procs > std::min(nodes, kMaxClientProcesses) || timeout.count() < 1) {
    std::fprintf(stderr, "bench: --nodes must be at least 1, --procs between 1 and --nodes (at most %d), "
                 "--timeout-ms positive\n", kMaxClientProcesses);
    return 2;
  }
  // Each process needs a socket per node it holds: the server all K, a client process its share.
  const int largest_share = (nodes + procs - 1) / procs;
  const rlim_t need = static_cast<rlim_t>(std::max(nodes, largest_share)) + kSpareFds;
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < need) {
    rl.rlim_cur = std::min(need, rl.rlim_max);
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need) {
      std::fprintf(stderr, "bench: %d nodes need %lu open files in the server process; the hard limit is %lu\n",
                   nodes, static_cast<unsigned long>(need), static_cast<unsigned long>(rl.rlim_max));
      return 2;
    }
  }
  const std::int64_t setup_deadline = monotonic_ns() + timeout.count() * 1'000'000;
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (pin && cpus < 2) {
    std::fprintf(stderr, "bench: --pin needs at least 2 CPUs (one for the server, the rest for the clients)\n");
    return 2;
  }
  // Fork the client processes before any io_context exists in this process.
  std::vector<ClientProcess> children(static_cast<std::size_t>(procs));
  for (int p = 0; p < procs; ++p) {
    int down[2], up[2];
    if (pipe(down) || pipe(up)) { std::perror("bench: pipe"); return 2; }
    int first = static_cast<int>(static_cast<long long>(nodes) * p / procs);
    int count = static_cast<int>(static_cast<long long>(nodes) * (p + 1) / procs) - first;
    pid_t pid = fork();
    if (pid < 0) { std::perror("bench: fork"); return 2; }
    if (pid == 0) {
      if (pin && !pin_to_cpus(1, cpus - 1)) _exit(2);
      ::close(down[1]);
      ::close(up[0]);
      _exit(run_client_process(server_address(p), first, count, down[0], up[1], timeout, rest));
    }
    ::close(down[0]);
    ::close(up[1]);
    children[p] = ClientProcess{pid, down[1], up[0], false, {}};
  }
  // A client process that reported exits at once; one that did not (or does not) is killed.
  auto stop_children = [&] {
    const std::int64_t exit_deadline = monotonic_ns() + 2'000'000'000;
    for (auto& c : children) {
      if (!c.reported) ::kill(c.pid, SIGKILL);  // only our own children, by pid
      int status = 0;
      while (waitpid(c.pid, &status, WNOHANG) == 0) {
        if (monotonic_ns() > exit_deadline) {
          ::kill(c.pid, SIGKILL);
          waitpid(c.pid, &status, 0);
          break;
        }
        usleep(1000);
      }
    }
  };

  if (pin && !pin_to_cpus(0, 0)) { std::perror("bench: sched_setaffinity"); stop_children(); return 2; }
  boost::asio::io_context io;
  ServerOptions so;
  so.job_id = "bench";
  so.expected_nodes = nodes;
  so.join_timeout = timeout;
  // The simulated nodes share 127.0.0.1; real nodes each have their own address, so the cap
  // per source address (against one host flooding the master) never binds them: lifted here.
  // The global cap of unjoined peers stays as in production (over it, connections wait for a place).
  so.max_unjoined_per_address = static_cast<std::size_t>(nodes);
  std::int64_t plan_ns = 0, assignments_sent_ns = 0;
  ServerCallbacks cb;
  cb.plan = [&](Generation, const std::vector<NodeRecord>&) {
    plan_ns = monotonic_ns();
    // Runs once plan() has returned and the server has queued every Assignment.
    boost::asio::post(io, [&] { assignments_sent_ns = monotonic_ns(); });
    JobPlan plan;
    plan.worker_master_addr = "127.0.0.1";
    plan.worker_master_port = 29500;
    plan.init_deadline_s = 60;
    return plan;
  };
  Server server(io, so, cb);
  std::vector<std::string> addresses;
  for (int p = 0; p < procs; ++p) addresses.push_back(server_address(p));
  std::string err = server.listen(addresses, 0);
  if (!err.empty()) { std::fprintf(stderr, "bench: %s\n", err.c_str()); stop_children(); return 2; }
  const std::uint16_t port = server.port();
  for (auto& c : children) {
    char ready = 0;
    if (!write_message(c.to_child, port) || !read_exactly(c.from_child, &ready, sizeof ready, setup_deadline)) {
      std::fprintf(stderr, "bench: a client process did not get ready within --timeout-ms %lld\n",
                   static_cast<long long>(timeout.count()));
      stop_children();
      return 2;
    }
  }
  const std::optional<long long> overflows_before = listen_overflows();
  const std::int64_t start_ns = monotonic_ns() + kStartLeadNs;
  for (auto& c : children) {
    if (!write_message(c.to_child, start_ns)) { std::perror("bench: pipe"); stop_children(); return 2; }
    ::close(c.to_child);
  }
  const CpuTime server_cpu_at_start = cpu_time();

  // Client processes stop waiting after --timeout-ms from their start (and the rest after it);
  // give them 2 s more to report.
  const std::int64_t deadline =
      start_ns + (timeout.count() + 2000 + (rest.count() > 0 ? rest.count() + kRestSettle.count() : 0)) * 1'000'000;
  int reported = 0;
  std::int64_t rest_from_ns = 0, rest_cpu_from = 0, rest_server_cpu = 0;  // the server's rest window
  while (reported < procs && monotonic_ns() < deadline) {
    io.run_for(rest_from_ns ? 100ms : 5ms);  // at rest, this loop's own wake-ups stay out of the figure
    if (rest.count() > 0 && assignments_sent_ns && !rest_from_ns && monotonic_ns() >= assignments_sent_ns + kRestSettle.count() * 1'000'000) {
      rest_from_ns = monotonic_ns();
      rest_cpu_from = cpu_ns();
    }
    if (rest_from_ns && !rest_server_cpu && monotonic_ns() >= rest_from_ns + rest.count() * 1'000'000)
      rest_server_cpu = cpu_ns() - rest_cpu_from;
    for (auto& c : children) {
      pollfd pfd{c.from_child, POLLIN, 0};
      if (c.reported || ::poll(&pfd, 1, 0) <= 0) continue;
      c.reported = read_exactly(c.from_child, &c.report, sizeof c.report, deadline);
      if (!c.reported) c.report = ClientReport{};
      c.reported = true;  // a process that closed its pipe without a report has failed
      ++reported;
    }
  }
  const CpuTime server_cpu_now = cpu_time();
  const CpuTime server_cpu{server_cpu_now.user_ns - server_cpu_at_start.user_ns,
                           server_cpu_now.system_ns - server_cpu_at_start.system_ns};
  const std::optional<long long> overflows_after = listen_overflows();
  server.close();
  io.run_for(50ms);
  stop_children();

  ClientReport all;  // earliest first join and first assignment, latest of the rest, sums of counts
  all.first_join_ns = all.first_assignment_ns = INT64_MAX;
  for (const auto& c : children) {
    const ClientReport& r = c.report;
    all.assigned += r.assigned;
    all.failed += r.failed;
    if (r.first_join_ns) all.first_join_ns = std::min(all.first_join_ns, r.first_join_ns);
    if (r.first_assignment_ns) all.first_assignment_ns = std::min(all.first_assignment_ns, r.first_assignment_ns);
    all.joins_issued_ns = std::max(all.joins_issued_ns, r.joins_issued_ns);
    all.last_assignment_ns = std::max(all.last_assignment_ns, r.last_assignment_ns);
    all.cpu_ns += r.cpu_ns;
    all.rest_cpu_ns += r.rest_cpu_ns;
  }
  if (all.assigned != nodes) {
    std::fprintf(stderr, "bench: K=%d did not complete: %d of %d nodes got an assignment, %d failed, %d of %d client "
                 "processes reported\n", nodes, all.assigned, nodes, all.failed, reported, procs);
    return 1;
  }
  const std::int64_t origin = all.first_join_ns;
  std::printf("nodes=%d procs=%d pinned=%d join_to_last_assignment_ms=%.1f join_to_plan_ms=%.1f joins_issued_ms=%.1f "
              "assignments_sent_ms=%.1f first_assignment_ms=%.1f server_cpu_ms=%.0f clients_cpu_ms=%.0f",
              nodes, procs, pin ? 1 : 0, ms_between(origin, all.last_assignment_ns), ms_between(origin, plan_ns),
              ms_between(origin, all.joins_issued_ns), ms_between(origin, assignments_sent_ns), ms_between(origin, all.first_assignment_ns),
              static_cast<double>(server_cpu.total()) / 1e6, static_cast<double>(all.cpu_ns) / 1e6);
  std::printf(" server_user_ms=%.0f server_system_ms=%.0f", static_cast<double>(server_cpu.user_ns) / 1e6,
              static_cast<double>(server_cpu.system_ns) / 1e6);
  if (rest.count() > 0) {
    const double window_ns = static_cast<double>(rest.count()) * 1e6;
    std::printf(" rest_ms=%lld rest_server_cpu_pct=%.2f rest_node_cpu_pct=%.4f", static_cast<long long>(rest.count()),
                100.0 * static_cast<double>(rest_server_cpu) / window_ns,
                100.0 * static_cast<double>(all.rest_cpu_ns) / window_ns / nodes);
  }
  if (overflows_before && overflows_after) std::printf(" listen_overflows=%lld", *overflows_after - *overflows_before);
  std::printf("\n");
  return 0;
}
