// The coordinator on etcd across hosts: a fake cluster of 7 network namespaces,
// hosts 1-3 a 3-member etcd cluster, hosts 4-7 one launcher each (3 nodes and a spare, gloo
// DDP with a checkpoint every host sees). What a cut link under the coordinator, a partition of
// the launchers 2 | 2, one lost etcd member and then a lost quorum do to a running job. Skipped,
// saying why, without root or etcd.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "etcd_cluster.h"
#include "netns_cluster.h"
#include "output_parsing.h"
#include "launcher_test_env.h"
#include "process_runner.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono;

namespace {

constexpr int kEtcdHosts = 3;      // hosts 1-3
constexpr int kFirstLauncher = 4;  // hosts 4-7: 3 nodes and a spare
constexpr int kLaunchers = 4;
constexpr auto kStepBound = seconds(90);  // one expected line, on a busy 2-core machine
constexpr auto kJobBound = seconds(150);  // a whole job to its end, failover included
// Every wait of one test ends by this long after its cluster was built, so that the test ends
// (and removes its namespaces and etcd) before ctest's TIMEOUT of 300 s would kill it.
constexpr auto kTestBound = seconds(240);

const std::vector<std::string>& kUnsetEnv = ddplaunch::testing::kLauncherEnvToUnset;

bool torch_available() { return ddplaunch::testing::torch_available(PYTHON_WITH_TORCH); }

// "DONE rank=R world=W generation=G resumed_from=S" of spare_train.py.
struct Done {
  int world = 0, generation = -1, resumed_from = -1;
};
std::optional<Done> done_line(const std::string& output) {
  std::smatch m;
  static const std::regex re(R"(DONE rank=\d+ world=(\d+) generation=(\d+) resumed_from=(\d+))");
  if (!std::regex_search(output, m, re)) return std::nullopt;
  return Done{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

// The highest "STEP N" in `text`; 0 when none.
int last_step(const std::string& text) {
  static const std::regex re(R"(STEP (\d+)\n)");
  int last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    last = std::max(last, std::stoi((*it)[1]));
  return last;
}

// Seconds from `since` until no worker runs in `host`'s namespace (polled every 100 ms); -1
// when one still does at `bound`.
double seconds_until_no_worker(const dt::NetnsCluster& cluster, int host, steady_clock::time_point since,
                               milliseconds bound) {
  const auto deadline = since + bound;
  do {
    bool worker = false;
    for (pid_t pid : cluster.pids_in(host)) {
      std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
      const std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      // A worker: spare_train.py run by Python (the launcher's own command line names it too).
      const std::string program = text.substr(0, text.find('\0'));
      worker = text.find("spare_train.py") != std::string::npos && program.find("ddplaunch") == std::string::npos;
      if (worker) break;
    }
    if (!worker) return duration<double>(steady_clock::now() - since).count();
    std::this_thread::sleep_for(milliseconds(100));
  } while (steady_clock::now() < deadline);
  return -1;
}

// One test's world: the cluster, etcd on hosts 1-3, a checkpoint directory, and the launchers
// on hosts 4-7 (launcher i on host kFirstLauncher + i), started by start_job().
class EtcdNetnsJob {
 public:
  explicit EtcdNetnsJob(const std::string& prefix)
      : cluster_(dt::NetnsCluster::unique_name(prefix), kEtcdHosts + kLaunchers),
        dir_(dt::temp_dir("ddplaunch-etcd-netns-")),
        job_id_("etcd-netns-" + prefix + "-" + std::to_string(getpid())) {}
  ~EtcdNetnsJob() {
    launchers_.clear();  // SIGKILL to each launcher's process group (its workers follow: orphan guard)
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string start_etcd() {
    std::vector<dt::EtcdHost> hosts;
    for (int h = 1; h <= kEtcdHosts; ++h) hosts.push_back({cluster_.address(h), cluster_.exec_argv(h, {})});
    return etcd_.start_on(hosts, within(seconds(60)));
  }

  // Every launcher the same line; `steps` of spare_train.py, 0.1 s each (an upper bound: see
  // end_training_once_restarted); `nodes` as --nnodes (an elastic MIN:MAX waits 3 s of last
  // call for more than MIN).
  void start_job(int steps, const std::string& nodes = "3") {
    const std::string script = std::string(SOURCE_DIR) + "/tests/integration/compat_scripts/spare_train.py";
    const std::vector<std::string> argv = {
        DDPLAUNCH_BIN, "--nnodes", nodes, "--last-call", "3", "--spares", "1", "--nproc-per-node", "1", "--rdzv-backend", "etcd",
        "--rdzv-endpoint", etcd_.endpoints(), "--rdzv-id", job_id_, "--rdzv-conf", "lease_ttl=2",
        "--heartbeat-interval", "0.2", "--heartbeat-timeout", "2", "--grace", "1", "--",
        PYTHON_WITH_TORCH, script, dir_ + "/ckpt.pt", std::to_string(steps), "0.1", dir_ + "/stop"};
    for (int i = 0; i < kLaunchers; ++i) {
      launchers_.push_back(std::make_unique<dt::BackgroundProcess>());
      EXPECT_TRUE(launchers_.back()->start(cluster_.exec_argv(host_of(i), argv), {}, kUnsetEnv))
          << launchers_.back()->output_so_far();
    }
  }

  // Once a launcher but `except` started a generation after the first (the group restarted
  // after the loss the test caused), the workers are told to end after their current step
  // (spare_train.py's stop file): they resumed from the checkpoint, and the rest of the steps
  // would prove nothing more. Where no restart comes, the job trains to its end and the test's
  // checks say why.
  void end_training_once_restarted(int except = -1) const {
    static const std::regex restarted(R"(generation [1-9]\d*: starting)");
    const auto until = steady_clock::now() + within(kStepBound);
    do {
      for (int i = 0; i < kLaunchers; ++i) {
        if (i == except || !std::regex_search(launchers_[i]->output_so_far(), restarted)) continue;
        std::ofstream(dir_ + "/stop") << "stop\n";
        return;
      }
      std::this_thread::sleep_for(milliseconds(100));
    } while (steady_clock::now() < until);
  }

  // `want`, or less where the test's own bound comes first.
  milliseconds within(milliseconds want) const {
    return std::max(milliseconds(1), std::min(want, duration_cast<milliseconds>(until_ - steady_clock::now())));
  }
  static int host_of(int launcher) { return kFirstLauncher + launcher; }
  dt::NetnsCluster& cluster() { return cluster_; }
  dt::EtcdCluster& etcd() { return etcd_; }
  dt::BackgroundProcess& launcher(int i) { return *launchers_.at(i); }
  const std::string& job_id() const { return job_id_; }

  // The first launcher (but `except`) whose output has `text`, polling up to `bound`; -1: none.
  int which_says(const std::string& text, milliseconds bound, int except = -1) const {
    const auto until = steady_clock::now() + bound;
    do {
      for (int i = 0; i < kLaunchers; ++i)
        if (i != except && launchers_[i]->output_so_far().find(text) != std::string::npos) return i;
      std::this_thread::sleep_for(milliseconds(100));
    } while (steady_clock::now() < until);
    return -1;
  }
  // The highest STEP any launcher printed so far.
  int step_so_far() const {
    int step = 0;
    for (const auto& l : launchers_) step = std::max(step, last_step(l->output_so_far()));
    return step;
  }
  // Polls until some launcher printed STEP >= `step`; false at the bound.
  bool wait_step(int step, milliseconds bound) const {
    const auto until = steady_clock::now() + bound;
    do {
      if (step_so_far() >= step) return true;
      std::this_thread::sleep_for(milliseconds(100));
    } while (steady_clock::now() < until);
    return false;
  }

  // Waits for each launcher but `skip` (each at most `bound` from now); results by launcher.
  std::vector<dt::RunResult> wait_all(milliseconds bound, int skip = -1) {
    const auto deadline = steady_clock::now() + bound;
    std::vector<dt::RunResult> results(kLaunchers);
    for (int i = 0; i < kLaunchers; ++i) {
      if (i == skip) continue;
      results[i] = launchers_[i]->wait(std::max(duration_cast<milliseconds>(deadline - steady_clock::now()),
                                                milliseconds(1)));
    }
    return results;
  }

  std::string everything() const {
    std::string out;
    for (int i = 0; i < kLaunchers; ++i)
      out += "===== launcher " + std::to_string(i) + " (host " + std::to_string(host_of(i)) + ")\n" +
             launchers_[i]->output_so_far();
    for (int m = 0; m < kEtcdHosts; ++m)
      out += "===== etcd member " + std::to_string(m) + " (tail)\n" + tail(etcd_.log(m));
    return out;
  }

 private:
  static std::string tail(const std::string& text) {
    return text.size() > 3000 ? text.substr(text.size() - 3000) : text;
  }

  const steady_clock::time_point until_ = steady_clock::now() + kTestBound;
  dt::NetnsCluster cluster_;
  dt::EtcdCluster etcd_;
  std::string dir_;
  std::string job_id_;
  std::vector<std::unique_ptr<dt::BackgroundProcess>> launchers_;
};

// Empty when this machine can run these tests; otherwise why not.
std::string skip_reason() {
  if (std::string r = dt::NetnsCluster::skip_reason(); !r.empty()) return r;
  if (!dt::EtcdCluster::available()) return dt::kNoEtcd;
  if (!torch_available()) return std::string(PYTHON_WITH_TORCH) + " cannot import torch.distributed";
  return "";
}

// Every launcher but `except` ended with 0 and its worker's DONE line says world 3.
void expect_finished_in_world_3(const std::vector<dt::RunResult>& results, int except, const std::string& all,
                                std::vector<Done>* dones = nullptr) {
  for (int i = 0; i < kLaunchers; ++i) {
    if (i == except) continue;
    EXPECT_FALSE(results[i].timed_out) << "launcher " << i << " did not end\n" << all;
    EXPECT_EQ(results[i].exit_code, 0) << "launcher " << i << "\n" << all;
  }
  int done = 0;
  for (int i = 0; i < kLaunchers; ++i) {
    if (i == except) continue;
    if (auto d = done_line(results[i].output)) {
      ++done;
      EXPECT_EQ(d->world, 3) << all;
      if (dones) dones->push_back(*d);
    }
  }
  EXPECT_EQ(done, 3) << "three workers should end training\n" << all;
}

}  // namespace

// The coordinator's host drops off the network mid-run: its lease expires, another launcher is
// elected, takes over from the state in etcd, and the job goes on with the spare in the lost
// slot (same world size, resumed from the checkpoint). The isolated launcher must stop its
// worker and end by itself: it cannot know it was replaced, so it must not go on as coordinator.
TEST(EtcdNetnsFailover, CoordinatorsLinkCutAnotherTakesOverAndTheIsolatedOneStops) {
  if (std::string r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  EtcdNetnsJob job("ecl");
  ASSERT_EQ(job.start_etcd(), "");
  job.start_job(120);
  const int old = job.which_says("elected the job's coordinator", job.within(kStepBound));
  ASSERT_GE(old, 0) << job.everything();
  ASSERT_TRUE(job.wait_step(6, job.within(kStepBound))) << job.everything();

  job.cluster().set_link(EtcdNetnsJob::host_of(old), false);
  const auto cut = steady_clock::now();
  // The isolated one first (the survivors' outputs are collected meanwhile): its worker must
  // stop within lease_ttl + heartbeat timeout + grace (5 s; 20 s on a busy machine), and the
  // launcher end by itself. (Where the election made the spare's launcher the coordinator,
  // there is no worker on its host.)
  const double worker_gone_after =
      seconds_until_no_worker(job.cluster(), EtcdNetnsJob::host_of(old), cut, job.within(seconds(20)));
  dt::RunResult isolated = job.launcher(old).wait(job.within(seconds(60)));
  const double isolated_ended_after = duration<double>(steady_clock::now() - cut).count();
  const int successor = job.which_says("elected the job's coordinator", job.within(kStepBound), old);
  job.end_training_once_restarted(old);
  std::vector<dt::RunResult> results = job.wait_all(job.within(kJobBound), old);
  results[old] = isolated;
  const std::string all = dt::all_output(results, "launcher") + "===== coordinator was launcher " +
                          std::to_string(old) + ", successor " + std::to_string(successor) +
                          "; after the cut the isolated one's worker was gone in " + std::to_string(worker_gone_after) +
                          " s, the launcher in " + std::to_string(isolated_ended_after) + " s\n";
  RecordProperty("isolated_worker_gone_s", std::to_string(worker_gone_after));
  RecordProperty("isolated_launcher_ended_s", std::to_string(isolated_ended_after));

  // The survivors: a new coordinator took over, and the job finished with world size 3.
  ASSERT_GE(successor, 0) << all;
  EXPECT_NE(results[successor].output.find("took over as the job's coordinator after generation"), std::string::npos)
      << all;
  std::vector<Done> dones;
  expect_finished_in_world_3(results, old, all, &dones);
  for (const Done& d : dones) {
    EXPECT_GE(d.generation, 1) << all;
    EXPECT_GE(d.resumed_from, 6) << all;
  }
  // No order reached them but the new coordinator's assignment: none from the isolated one
  // (obeyed or refused), and no restart ordered.
  for (int i = 0; i < kLaunchers; ++i) {
    if (i == old) continue;
    EXPECT_EQ(results[i].output.find("refused an order"), std::string::npos) << all;
    EXPECT_EQ(results[i].output.find("master ordered"), std::string::npos) << all;
  }

  // The isolated one: it stopped its worker, stopped coordinating and ended, with an error.
  EXPECT_GE(worker_gone_after, 0) << "the isolated coordinator's worker still ran 20 s after the cut\n" << all;
  EXPECT_FALSE(isolated.timed_out) << "the isolated coordinator did not end within 60 s of the cut\n" << all;
  EXPECT_NE(isolated.exit_code, 0) << all;
  EXPECT_NE(isolated.output.find("this launcher stops coordinating the job"), std::string::npos) << all;
  EXPECT_FALSE(done_line(isolated.output).has_value()) << "its worker trained on alone\n" << all;
  EXPECT_EQ(job.cluster().processes_left(EtcdNetnsJob::host_of(old), seconds(10)), std::set<pid_t>{})
      << "processes left on the isolated host\n" << all;
}

// A partition 2 | 2 of the launchers, with etcd's majority on one side: hosts 1, 2 (etcd) and
// the launchers on 4, 5 | host 3 (etcd) and the launchers on 6, 7 (--nnodes 2:3: a side of two
// launchers may train on). At most one side trains: the side without etcd's quorum stops its
// workers (its coordinator, if it was there, reaches neither etcd nor half of the launchers;
// its other launcher has lost the coordinator) and trains no more; the majority side elects or
// keeps the coordinator and finishes the job with world size 2 from the checkpoint.
TEST(EtcdNetnsFailover, APartitionTwoAgainstTwoTrainsOnOneSideAtMost) {
  if (std::string r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  EtcdNetnsJob job("epa");
  ASSERT_EQ(job.start_etcd(), "");
  job.start_job(150, "2:3");
  const int coordinator = job.which_says("elected the job's coordinator", job.within(kStepBound));
  ASSERT_GE(coordinator, 0) << job.everything();
  ASSERT_TRUE(job.wait_step(6, job.within(kStepBound))) << job.everything();

  const std::vector<int> majority{0, 1}, minority{2, 3};  // launchers on hosts 4, 5 | 6, 7
  // etcd's leader on the minority side (host 3): the majority's etcd must elect another and
  // answers nobody meanwhile, the hardest moment for a coordinator there that loses half of
  // the launchers in the same cut (it must not take that for being cut off itself).
  ASSERT_EQ(job.etcd().move_leader(2), "");
  job.cluster().partition({1, 2, EtcdNetnsJob::host_of(0), EtcdNetnsJob::host_of(1)},
                          {3, EtcdNetnsJob::host_of(2), EtcdNetnsJob::host_of(3)});
  const auto cut = steady_clock::now();
  // The minority side: no worker within lease_ttl + heartbeat timeout + grace (5 s; 20 s on a
  // busy machine), and none started again while the majority finishes.
  std::vector<double> gone_after;
  for (int i : minority)
    gone_after.push_back(
        seconds_until_no_worker(job.cluster(), EtcdNetnsJob::host_of(i), cut, job.within(seconds(20))));
  job.end_training_once_restarted();
  std::vector<dt::RunResult> results(kLaunchers);
  for (int i : majority) results[i] = job.launcher(i).wait(job.within(kJobBound));
  std::vector<double> still_gone;
  for (int i : minority)
    still_gone.push_back(
        seconds_until_no_worker(job.cluster(), EtcdNetnsJob::host_of(i), steady_clock::now(), milliseconds(1)));
  std::string all;
  for (int i = 0; i < kLaunchers; ++i)
    all += "===== launcher " + std::to_string(i) + " (host " + std::to_string(EtcdNetnsJob::host_of(i)) + ")\n" +
           (results[i].output.empty() ? job.launcher(i).output_so_far() : results[i].output);
  all += "===== coordinator before the partition: launcher " + std::to_string(coordinator) +
         "; minority workers gone after " + std::to_string(gone_after[0]) + " s, " + std::to_string(gone_after[1]) +
         " s\n";

  for (std::size_t k = 0; k < minority.size(); ++k) {
    EXPECT_GE(gone_after[k], 0) << "a worker of launcher " << minority[k] << " still ran 20 s after the partition\n"
                                << all;
    EXPECT_GE(still_gone[k], 0) << "launcher " << minority[k] << " ran a worker again\n" << all;
    EXPECT_FALSE(done_line(job.launcher(minority[k]).output_so_far()).has_value())
        << "the minority side trained to the end\n" << all;
  }
  // The majority side trained on, as one world of two, from the checkpoint.
  int done = 0;
  for (int i : majority) {
    EXPECT_FALSE(results[i].timed_out) << "launcher " << i << " did not end\n" << all;
    EXPECT_EQ(results[i].exit_code, 0) << "launcher " << i << "\n" << all;
    if (auto d = done_line(results[i].output)) {
      ++done;
      EXPECT_EQ(d->world, 2) << all;
      EXPECT_GE(d->generation, 1) << all;
      EXPECT_GE(d->resumed_from, 6) << all;
    }
  }
  EXPECT_EQ(done, 2) << "the majority side should end training with two workers\n" << all;
  // Nothing on the minority side trained again: a coordinator there may still decide a new
  // generation in the seconds before it sees it is cut off, but etcd never confirms it (fencing).
  for (int i : minority)
    EXPECT_EQ(job.launcher(i).output_so_far().find("generation 1: starting"), std::string::npos) << all;
  if (coordinator >= 2) {
    EXPECT_NE(all.find("took over as the job's coordinator"), std::string::npos)
        << "the coordinator was on the minority side: the majority must elect another\n" << all;
  }
}

// etcd members lost one after the other mid-run. One of three (the first endpoint every
// launcher uses): etcd keeps its quorum, the launchers move to the next endpoint, and nothing
// changes for the job. A second one: no quorum. The launchers cannot renew their leases but no
// lease expires either; the coordinator says etcd is unreachable and the workers keep training
// (`ddplaunch status`, which asks etcd for the coordinator, fails naming each member). With one
// member back (quorum again), a launcher lost later is handled as before: the spare takes its
// slot and training resumes from the checkpoint with world size 3.
TEST(EtcdNetnsFailover, EtcdMembersLostOneByOneWorkersKeepTrainingAndALaterLossIsHandled) {
  if (std::string r = skip_reason(); !r.empty()) GTEST_SKIP() << r;
  EtcdNetnsJob job("eql");
  ASSERT_EQ(job.start_etcd(), "");
  job.start_job(450);
  const int coordinator = job.which_says("elected the job's coordinator", job.within(kStepBound));
  ASSERT_GE(coordinator, 0) << job.everything();
  const int spare = job.which_says("is a hot spare of this job", job.within(kStepBound));
  ASSERT_GE(spare, 0) << job.everything();
  ASSERT_TRUE(job.wait_step(6, job.within(kStepBound))) << job.everything();

  // One member lost: thirty steps more (3 s, longer than a lease of 2 s), with one coordinator
  // all along, no restart and no order.
  job.etcd().kill(0);
  ASSERT_TRUE(job.wait_step(job.step_so_far() + 30, job.within(kStepBound))) << job.everything();
  int elected = 0;
  for (int i = 0; i < kLaunchers; ++i) {
    const std::string out = job.launcher(i).output_so_far();
    elected += dt::count_of(out, "elected the job's coordinator");
    EXPECT_EQ(out.find("took over as the job's coordinator"), std::string::npos) << job.everything();
    EXPECT_EQ(out.find("master ordered"), std::string::npos) << job.everything();
    EXPECT_EQ(out.find("generation 1"), std::string::npos) << job.everything();
  }
  EXPECT_EQ(elected, 1) << job.everything();

  // The second member lost: no quorum.
  job.etcd().kill(1);
  ASSERT_TRUE(job.launcher(coordinator).wait_for_output("etcd is unreachable", job.within(seconds(30))))
      << job.everything();
  // No quorum for 15 s more (longer than the watch's reconnect bound, 2 x lease_ttl, and TCP
  // keepalive's ~11 s): every launcher stays, and the workers keep training, ten steps at least.
  const int step_when_unreachable = job.step_so_far();
  const auto outage_end = steady_clock::now() + seconds(15);
  // `ddplaunch status` asks etcd where the coordinator is: without a quorum it cannot say, and
  // ends in bounded time naming etcd.
  dt::RunResult status = dt::run_command(
      job.cluster().exec_argv(EtcdNetnsJob::host_of(spare),
                              {DDPLAUNCH_BIN, "status", "--rdzv-backend", "etcd", "--rdzv-endpoint",
                               job.etcd().endpoints(), "--rdzv-id", job.job_id()}),
      job.within(seconds(40)));
  EXPECT_FALSE(status.timed_out) << status.output;
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_LT(status.seconds, 20) << status.output;
  EXPECT_NE(status.output.find("failed on every etcd endpoint of --rdzv-endpoint"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find(job.etcd().endpoint(2)), std::string::npos) << status.output;
  while (steady_clock::now() < outage_end) {
    for (int i = 0; i < kLaunchers; ++i)
      ASSERT_TRUE(dt::process_alive(job.launcher(i).pid())) << "launcher " << i << " ended\n" << job.everything();
    std::this_thread::sleep_for(milliseconds(200));
  }
  ASSERT_TRUE(job.wait_step(step_when_unreachable + 10, job.within(kStepBound))) << job.everything();
  for (int i = 0; i < kLaunchers; ++i) {
    const std::string out = job.launcher(i).output_so_far();
    EXPECT_EQ(out.find("generation 1"), std::string::npos) << job.everything();
    EXPECT_EQ(out.find("stopping this node's workers"), std::string::npos) << job.everything();
  }

  // Quorum again; then a node's launcher is lost and the spare takes its slot.
  ASSERT_EQ(job.etcd().restart(1, job.within(seconds(40))), "") << job.everything();
  ASSERT_TRUE(job.launcher(coordinator).wait_for_output("etcd answers again", job.within(seconds(30))))
      << job.everything();
  int victim = 0;
  while (victim == coordinator || victim == spare) ++victim;
  const int step_before_loss = job.step_so_far();
  ASSERT_TRUE(job.launcher(victim).send_signal(SIGKILL));
  job.end_training_once_restarted(victim);
  std::vector<dt::RunResult> results = job.wait_all(job.within(kJobBound), victim);
  results[victim] = job.launcher(victim).wait(job.within(seconds(10)));
  const std::string all = dt::all_output(results, "launcher") + "===== coordinator " + std::to_string(coordinator) +
                          ", spare " + std::to_string(spare) + ", killed " + std::to_string(victim) + "\n";
  EXPECT_EQ(results[victim].term_signal, SIGKILL) << all;
  EXPECT_NE(results[spare].output.find("this hot spare takes the place of node"), std::string::npos) << all;
  std::vector<Done> dones;
  expect_finished_in_world_3(results, victim, all, &dones);
  for (const Done& d : dones) {
    EXPECT_GE(d.generation, 1) << all;
    EXPECT_GE(d.resumed_from, step_before_loss) << all;
  }
  for (const auto& r : results) {
    EXPECT_EQ(r.output.find("took over as the job's coordinator"), std::string::npos) << all;
  }
}
