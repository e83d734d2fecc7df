// rendezvous_bench: K simulated nodes (clients in P forked processes) join one server on
// 127.0.0.1; prints the time from the first join() to the last Assignment received.
// Usage: rendezvous_bench --nodes K [--procs P] [--timeout-ms T]. Driven by scripts/bench-rendezvous.
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "ddplaunch/rendezvous/rendezvous.h"

using namespace ddplaunch::rendezvous;
using namespace std::chrono_literals;

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

bool read_all(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// Child: wait for the port, join `count` clients at once, report {first join, last assignment, ok}.
int run_clients(int first, int count, int go_fd, int result_fd, std::chrono::milliseconds timeout) {
  std::uint16_t port = 0;
  if (!read_all(go_fd, &port, sizeof port)) return 2;
  boost::asio::io_context io;
  std::vector<std::unique_ptr<Client>> clients;
  int assigned = 0, failed = 0;
  std::int64_t last = 0;
  std::string first_error;
  for (int i = 0; i < count; ++i) {
    ClientOptions o;
    o.job_id = "bench";
    o.host = "127.0.0.1";
    o.port = port;
    o.retry_interval = 20ms;
    o.join_timeout = timeout;
    ClientCallbacks cb;
    cb.on_assignment = [&](const Assignment&) { ++assigned; last = now_ns(); };
    auto fail = [&](const std::string& why) { if (failed++ == 0) first_error = why; };
    cb.on_refused = fail;
    cb.on_lost = fail;
    clients.push_back(std::make_unique<Client>(io, o, std::move(cb)));
  }
  std::int64_t start = now_ns();
  for (int i = 0; i < count; ++i) {
    NodeFacts f;
    f.hostname = "sim" + std::to_string(first + i);
    f.nproc = 8;
    f.gpu_count = 8;
    clients[i]->join(f);
  }
  auto deadline = Clock::now() + timeout;
  while (assigned + failed < count && Clock::now() < deadline) io.run_for(10ms);
  std::int64_t out[3] = {start, last, assigned == count ? 1 : 0};
  if (failed) std::fprintf(stderr, "bench: %d clients failed, first: %s\n", failed, first_error.c_str());
  bool ok = ::write(result_fd, out, sizeof out) == static_cast<ssize_t>(sizeof out);
  for (auto& c : clients) c->close();
  return ok && out[2] ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 64, procs = 1;
  std::chrono::milliseconds timeout = 30000ms;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--nodes") nodes = std::atoi(argv[i + 1]);
    else if (k == "--procs") procs = std::atoi(argv[i + 1]);
    else if (k == "--timeout-ms") timeout = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else { std::fprintf(stderr, "usage: rendezvous_bench --nodes K [--procs P] [--timeout-ms T]\n"); return 2; }
  }
  if (nodes < 1 || procs < 1 || procs > nodes) { std::fprintf(stderr, "bench: bad --nodes/--procs\n"); return 2; }
  // Each node costs a client socket and a server socket (plus a few spare).
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rlim_t need = static_cast<rlim_t>(2 * nodes + 64);
  if (rl.rlim_cur < need) {
    rl.rlim_cur = std::min(need, rl.rlim_max);
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need) { std::fprintf(stderr, "bench: RLIMIT_NOFILE hard limit %lu < %lu needed\n", (unsigned long)rl.rlim_max, (unsigned long)need); return 2; }
  }
  // Fork the client processes before any io_context exists in this process.
  std::vector<int> go(procs), results(procs);
  std::vector<pid_t> pids(procs);
  for (int p = 0; p < procs; ++p) {
    int g[2], r[2];
    if (pipe(g) || pipe(r)) { std::perror("pipe"); return 2; }
    int first = nodes * p / procs, count = nodes * (p + 1) / procs - first;
    pids[p] = fork();
    if (pids[p] == 0) {
      ::close(g[1]);
      ::close(r[0]);
      _exit(run_clients(first, count, g[0], r[1], timeout));
    }
    ::close(g[0]);
    ::close(r[1]);
    go[p] = g[1];
    results[p] = r[0];
  }
  boost::asio::io_context io;
  ServerOptions so;
  so.job_id = "bench";
  so.expected_nodes = nodes;
  so.join_timeout = timeout;
  // The simulated nodes share 127.0.0.1; real nodes each have their own address, so the cap
  // per source address (against one host flooding the master) never binds them: lifted here.
  // The global cap of unjoined peers stays as in production (the listener pauses at it).
  so.max_unjoined_per_address = static_cast<std::size_t>(nodes);
  std::int64_t plan_ns = 0;
  ServerCallbacks cb;
  cb.plan = [&](std::uint64_t, const std::vector<NodeRecord>&) {
    plan_ns = now_ns();
    JobPlan plan;
    plan.worker_master_addr = "127.0.0.1";
    plan.worker_master_port = 29500;
    plan.timeout_s = 60;
    return plan;
  };
  Server server(io, so, cb);
  std::string err = server.listen("127.0.0.1", 0);
  if (!err.empty()) { std::fprintf(stderr, "bench: %s\n", err.c_str()); return 2; }
  std::uint16_t port = server.port();
  for (int p = 0; p < procs; ++p) {
    if (::write(go[p], &port, sizeof port) != sizeof port) return 2;
    ::close(go[p]);
  }
  std::int64_t first = 0, last = 0;
  int reported = 0, ok = 0;
  std::vector<bool> done(procs, false);
  auto deadline = Clock::now() + timeout + 2s;
  while (reported < procs && Clock::now() < deadline) {
    io.run_for(5ms);
    for (int p = 0; p < procs; ++p) {
      pollfd pfd{results[p], POLLIN, 0};
      if (done[p] || ::poll(&pfd, 1, 0) <= 0) continue;
      std::int64_t r[3] = {0, 0, 0};
      done[p] = true;
      ++reported;
      if (!read_all(results[p], r, sizeof r)) continue;
      first = first == 0 ? r[0] : std::min(first, r[0]);
      last = std::max(last, r[1]);
      ok += static_cast<int>(r[2]);
    }
  }
  server.close();
  io.run_for(50ms);
  int status = 0;
  for (pid_t pid : pids) waitpid(pid, &status, 0);
  if (ok != procs) { std::fprintf(stderr, "bench: K=%d did not complete (%d of %d client processes ok)\n", nodes, ok, procs); return 1; }
  std::printf("nodes=%d procs=%d join_to_last_assignment_ms=%.1f join_to_plan_ms=%.1f\n", nodes, procs,
              static_cast<double>(last - first) / 1e6, static_cast<double>(plan_ns - first) / 1e6);
  return 0;
}
