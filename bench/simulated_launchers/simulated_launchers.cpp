// simulated_launchers: K nodes that join a real ddplaunch master and then behave, towards it,
// as idle launchers of a training job do — for measuring what the master costs at rest with
// thousands of nodes (bench/run master-rest), which this machine cannot hold as real launchers.
//
// Each simulated node is a rendezvous Client with the facts a launcher of this build sends for
// the same program (its version, the program's fingerprint, this machine's GPU facts), a host
// name of its own ("sim-<i>") and one rank. Once assigned it reports its rank as running, as a
// launcher whose worker passed init does, and then every rank_report_period (the real
// launcher's period for the job's node count) a rank table with steps going
// on: the same `rank_states` frame, encoded by the same code, with the CPU share and the
// measured span and wait a shim gives. Heartbeats are the Client's own (none while the reports
// come more often than the pace). No workers run.
//
// The nodes are spread over forked processes (at most kPerProcess each: one socket per node
// under the open-file limit). Each process prints "assigned N" once all its nodes have their
// assignment, then stays until SIGTERM or SIGINT; a node that is refused or loses its master
// prints "lost: WHY" and the process exits 1.
//
// usage: simulated_launchers --master HOST:PORT --job-id ID --token T --nodes K --job-nodes N
//                            [--step-ms 100] -- PROGRAM...
//   --job-nodes: the job's node count (the master's --nnodes), K of them simulated
//   PROGRAM: the master's program, for the fingerprint every node must share
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "config/launch_config.h"
#include "ddplaunch/preflight/gpus.h"
#include "ddplaunch/rendezvous/client.h"
#include "node_facts.h"
#include "policy/rank_report_period.h"
#include "wire/node_messages.h"

using namespace ddplaunch;

namespace {

constexpr int kPerProcess = 4096;

struct Options {
  std::string host;
  std::uint16_t port = 0;
  std::string job_id, token;
  int nodes = 0, job_nodes = 0;
  long step_ms = 100;
  std::vector<std::string> program;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "simulated_launchers: %s\nusage: simulated_launchers --master HOST:PORT --job-id ID --token T --nodes K "
               "--job-nodes N [--step-ms 100] -- PROGRAM...\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (++i; i < argc; ++i) o.program.push_back(argv[i]);
      break;
    }
    if (i + 1 >= argc) usage(("a value is missing after " + a).c_str());
    std::string v = argv[++i];
    if (a == "--master") {
      auto colon = v.rfind(':');
      if (colon == std::string::npos) usage("--master needs HOST:PORT");
      o.host = v.substr(0, colon);
      o.port = static_cast<std::uint16_t>(std::atoi(v.c_str() + colon + 1));
    } else if (a == "--job-id") {
      o.job_id = v;
    } else if (a == "--token") {
      o.token = v;
    } else if (a == "--nodes") {
      o.nodes = std::atoi(v.c_str());
    } else if (a == "--job-nodes") {
      o.job_nodes = std::atoi(v.c_str());
    } else if (a == "--step-ms") {
      o.step_ms = std::atol(v.c_str());
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (o.host.empty() || o.port == 0 || o.nodes <= 0 || o.job_nodes <= o.nodes || o.program.empty() || o.step_ms <= 0)
    usage("--master, --nodes K, --job-nodes N > K, --step-ms > 0 and a program are needed");
  return o;
}

// One simulated launcher: joins, then reports its one rank while it "trains".
class SimulatedNode {
 public:
  SimulatedNode(boost::asio::io_context& io, const Options& options, rendezvous::NodeFacts facts,
                const std::string& source_address, int& assigned_count, bool& failed)
      : options_(options), facts_(std::move(facts)), period_timer_(io), assigned_count_(assigned_count), failed_(failed) {
    rendezvous::ClientOptions co;
    co.job_id = options.job_id;
    co.token = options.token;
    co.host = options.host;
    co.port = options.port;
    co.join_timeout = std::chrono::minutes(10);
    co.source_address = source_address;
    rendezvous::ClientCallbacks cb;
    cb.on_assignment = [this](const rendezvous::Assignment& a) { on_assignment(a); };
    cb.on_refused = [this](const std::string& why) { lost("refused: " + why); };
    cb.on_lost = [this](const std::string& why) { lost(why); };
    client_ = std::make_unique<rendezvous::Client>(io, co, cb);
  }

  void join() { client_->join(facts_); }

 private:
  void on_assignment(const rendezvous::Assignment& a) {
    generation_ = a.generation;
    rank_ = a.rank_offset;
    if (!assigned_) ++assigned_count_;
    assigned_ = true;
    period_ = rank_report_period(static_cast<std::size_t>(a.node_count));
    last_report_ = std::chrono::steady_clock::now();
    report();  // the worker passed init: its rank runs
    // As the launcher does (agent/rank_state_reporter.cpp): the first periodic report after a
    // random half to a whole period, each on the wall clock's grid.
    schedule(period_ / 2 + std::chrono::milliseconds(std::rand() % (period_.count() / 2 + 1)));
  }

  void schedule(std::chrono::milliseconds after) {
    const auto wall_now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    period_timer_.expires_after(report_delay_on_grid(wall_now, after, period_));
    period_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      report();
      schedule(period_);
    });
  }

  // The rank table a launcher sends while its worker trains: steps since the start at the
  // simulated step time, the last step just now, the whole period spent in steps (a tenth of
  // it waiting in collectives) on one core.
  void report() {
    auto now = std::chrono::steady_clock::now();
    long span_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_report_).count();
    last_report_ = now;
    steps_ += span_ms / options_.step_ms;
    messages::RankStates states;
    states.host = facts_.hostname;
    RankReport r;
    r.rank = rank_;
    r.pid = static_cast<pid_t>(100000 + rank_);
    r.phase = RankPhase::Running;
    r.init_entries = 1;
    r.state = "running";
    r.steps = steps_;
    r.max_interval_ms = options_.step_ms;
    r.progress_age_ms = options_.step_ms / 2;
    r.span_ms = span_ms;
    r.wait_ms = span_ms / 10;
    r.cpu_millicores = 990;
    states.ranks.push_back(r);
    client_->send(messages::encode(generation_, states));
  }

  void lost(const std::string& why) {
    if (failed_) return;
    failed_ = true;
    std::printf("lost: %s: %s\n", facts_.hostname.c_str(), why.c_str());
    std::fflush(stdout);
  }

  const Options& options_;
  rendezvous::NodeFacts facts_;
  std::unique_ptr<rendezvous::Client> client_;
  boost::asio::steady_timer period_timer_;
  int& assigned_count_;
  bool& failed_;
  bool assigned_ = false;
  Generation generation_{};
  int rank_ = 0;
  long steps_ = 0;
  std::chrono::milliseconds period_{2000};
  std::chrono::steady_clock::time_point last_report_;
};

// One process's share: nodes [first, first + count).
int run_share(const Options& options, const rendezvous::NodeFacts& common, int first, int count) {
  std::srand(static_cast<unsigned>(getpid()));
  boost::asio::io_context io;
  int assigned = 0;
  bool failed = false;
  std::vector<std::unique_ptr<SimulatedNode>> nodes;
  for (int i = 0; i < count; ++i) {
    rendezvous::NodeFacts facts = common;
    facts.hostname = "sim-" + std::to_string(first + i);
    // Real nodes connect from addresses of their own, and the master admits only a few
    // unproven peers per address at once: each group of 64 nodes connects from one address
    // of 127/8 (127.0.1.0 onwards), as 64 launchers behind one NAT would.
    const int group = (first + i) / 64;
    const std::string source = "127.0." + std::to_string(1 + group / 250) + "." + std::to_string(1 + group % 250);
    nodes.push_back(std::make_unique<SimulatedNode>(io, options, std::move(facts), source, assigned, failed));
    nodes.back()->join();
  }
  boost::asio::signal_set stop(io, SIGTERM, SIGINT);
  stop.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  bool said = false;
  boost::asio::steady_timer watch(io);
  std::function<void()> check = [&] {
    if (failed) return io.stop();
    if (!said && assigned == count) {
      std::printf("assigned %d\n", count);
      std::fflush(stdout);
      said = true;
    }
    watch.expires_after(std::chrono::milliseconds(50));
    watch.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) check();
    });
  };
  check();
  io.run();
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  // The facts a launcher of this build gathers for the same program and node count (each
  // simulated node then gets a host name of its own), on the master's address.
  LaunchConfig config;
  config.program = options.program;
  config.nodes = options.job_nodes;
  rendezvous::NodeFacts common = gather_node_facts(config, 1, preflight::detect_gpus());
  common.addresses = {options.host};
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<pid_t> children;
  for (int first = 0; first < options.nodes; first += kPerProcess) {
    int count = std::min(kPerProcess, options.nodes - first);
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("simulated_launchers: fork");
      break;
    }
    if (pid == 0) std::_Exit(run_share(options, common, first + 1, count));
    children.push_back(pid);
  }
  // The parent forwards an ending signal to its processes and reports how they ended.
  sigset_t ending;
  sigemptyset(&ending);
  sigaddset(&ending, SIGTERM);
  sigaddset(&ending, SIGINT);
  sigprocmask(SIG_BLOCK, &ending, nullptr);
  int worst = 0;
  std::size_t running = children.size();
  while (running > 0) {
    timespec tick{0, 100'000'000};
    if (sigtimedwait(&ending, nullptr, &tick) > 0)
      for (pid_t c : children) kill(c, SIGTERM);
    int status = 0;
    while (pid_t done = waitpid(-1, &status, WNOHANG)) {
      if (done < 0) break;
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) worst = 1;
    }
  }
  return worst;
}
