// GroupSupervisor: spawn, exit, outcome and stop of one generation; its parts own the output,
// the debuggers, the shim reports, the signals and the sweep.
#include "supervise/group_supervisor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <boost/asio/post.hpp>

#include <fmt/format.h>

#include "env/error_file.h"
#include "supervise/failed_exit.h"
#include "supervise/process_spawner.h"

namespace ddplaunch {

namespace {
constexpr auto kDrainBound = std::chrono::seconds(2);  // output EOF after a worker was reaped
}  // namespace

GroupSupervisor::GroupSupervisor(boost::asio::io_context& io, OrphanGuard& guard, StatusChannel& status,
                                 GroupCallbacks callbacks)
    : io_(io),
      guard_(guard),
      status_(status),
      callbacks_(std::move(callbacks)),
      child_exits_(io, SIGCHLD),
      drain_timer_(io),
      debuggers_(callbacks_),
      prompts_(callbacks_, debuggers_),
      output_(io, callbacks_, assignment_, debuggers_, prompts_, [this](Worker& w) { on_worker_finished(w); }),
      reports_(io, callbacks_, workers_, assignment_,
               [this](Worker& w) {
                 report_failure(w, FailurePhase::Init, FailureKind::InitFailed, w.phases.init_failure_detail());
               }),
      signals_(io, workers_),
      leftovers_(io, guard, workers_, assignment_) {
  status_.deliver_to([this](const contract::StatusMessage& m) { handle_status(m); });
  wait_for_child_exits();
}

GroupSupervisor::~GroupSupervisor() {
  status_.deliver_to(nullptr);
  signals_.kill_all(SIGKILL);
  for (auto& w : workers_)
    if (w->process.pid() > 0 && !w->process.status()) waitpid(w->process.pid(), nullptr, 0);
}

void GroupSupervisor::close() {
  closed_ = true;
  output_.close();
  signals_.kill_all(SIGKILL);
  leftovers_.sweep_now();  // untagged orphans are out of reach once we exit
  guard_.job_swept();  // no worker starts after this: the guard need not scan the machine at our exit
  boost::system::error_code ignored;
  child_exits_.cancel(ignored);
  reports_.cancel_init_grace();
  signals_.cancel();
  drain_timer_.cancel();
}

// The one wait for children: every SIGCHLD reaps whichever workers have exited.
void GroupSupervisor::wait_for_child_exits() {
  child_exits_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec || closed_) return;
    reap_exited_children();
    if (!closed_) wait_for_child_exits();  // a reaped worker may have finished the node (close())
  });
}

bool GroupSupervisor::active() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return !w->finished(); });
}

void GroupSupervisor::start(const GroupSpec& spec) {
  assignment_ = spec.assignment;
  output_.start(spec);
  signals_.start();
  outcome_delivered_ = false;
  create_workers(spec);
  if (spawn_workers(spec)) reports_.start(spec.init_grace_s);
}

// One record per local rank: its prefix, routing and rank log.
void GroupSupervisor::create_workers(const GroupSpec& spec) {
  workers_.clear();
  const auto prefix_template = spec.base_env.find("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
  for (int local = 0; local < spec.assignment.local_world_size; ++local) {
    const int global = spec.assignment.rank_offset + local;
    // torchrun prints its TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE exactly as given, then the line.
    auto worker = prefix_template != spec.base_env.end()
                      ? std::make_shared<Worker>(io_, local, global,
                                                 prefix_from_template(prefix_template->second, spec.assignment.role,
                                                                      global, local),
                                                 "")
                      : std::make_shared<Worker>(io_, local, global,
                                                 worker_prefix(spec.assignment.node_rank, spec.assignment.node_count,
                                                               global));
    output_.route(*worker, spec.ranks_filter);
    if (std::string error = output_.open_log(*worker, spec.log_dir, spec.hostname); !error.empty())
      write_prefixed_line(OutputStream::Stderr, "[ddplaunch]", error);
    workers_.push_back(worker);
  }
}

bool GroupSupervisor::spawn_workers(const GroupSpec& spec) {
  std::vector<SpawnRequest> requests;
  for (auto& worker : workers_) {
    SpawnRequest& request = requests.emplace_back();
    request.argv = spec.program;
    Environment env = build_worker_environment(spec.base_env, spec.assignment, worker->local_rank);
    if (spec.virtual_local_rank) narrow_to_own_gpu(env, worker->local_rank);
    if (static_cast<std::size_t>(worker->local_rank) < spec.placement.size()) {
      request.cpus = spec.placement[static_cast<std::size_t>(worker->local_rank)].cpus;
      request.memory_nodes = spec.placement[static_cast<std::size_t>(worker->local_rank)].memory_nodes;
    }
    // The mark that finds its descendants even after they leave its process group.
    if (!guard_.job_tag().empty()) env[contract::kJobTag] = guard_.job_tag();
    request.env = to_env_strings(env);
    request.start_stopped = std::count(spec.pause_ranks.begin(), spec.pause_ranks.end(), worker->global_rank) > 0;
    request.stdin_pipe = !spec.inherit_stdin;
    request.stdin_inherit = spec.inherit_stdin;
  }
  std::vector<SpawnedProcess> spawned = spawn_worker_processes(requests);
  for (std::size_t i = 0; i < spawned.size(); ++i) {
    const std::shared_ptr<Worker>& worker = workers_[i];
    const SpawnedProcess& process = spawned[i];
    if (process.pid < 0) break;  // the last result: reported below
    worker->process.pid_ = process.pid;
    guard_.watch(process.pid);
    if (process.stdin_fd >= 0) debuggers_.connect_keyboard(*worker, process.stdin_fd);
    output_.read(worker, process.stdout_fd, process.stderr_fd);
    signals_.started(*worker, requests[i].start_stopped);
    if (worker->signals.paused() && callbacks_.on_paused) callbacks_.on_paused(*worker);
  }
  // Workers not reached because an earlier spawn failed count as never started.
  for (auto& worker : workers_)
    if (worker->process.pid_ < 0 && !worker->process.status_) worker->process.status_ = ExitStatus{false, 127, 0, false};
  if (spawned.empty() || spawned.back().pid >= 0) return true;

  // Out of processes, memory or descriptors is the node's state, not the program's: named
  // as such, and restartable. The workers after it were not started; those before are stopped.
  const SpawnedProcess& failed = spawned.back();
  Worker& worker = *workers_[spawned.size() - 1];
  if (is_resource_shortage(failed.error_number))
    report_failure(worker, FailurePhase::Init, FailureKind::SpawnNoResources,
                   fmt::format("{}: {}", describe_resource_shortage(failed.error_number), failed.error));
  else
    report_failure(worker, FailurePhase::Init, FailureKind::SpawnFailed, failed.error);
  stop(std::chrono::milliseconds(0));
  // Nothing was running (the first spawn failed): the outcome is known now; deliver it
  // from the loop, not from inside the caller's start().
  if (!active()) boost::asio::post(io_, [this] { deliver_outcome_if_done(); });
  return false;
}

void GroupSupervisor::show_ranks(const std::vector<int>& ranks_filter) {
  for (auto& w : workers_) output_.route(*w, ranks_filter);
}

void GroupSupervisor::reap_exited_children() {
  for (auto& worker : workers_) {
    const pid_t pid = worker->process.pid();
    if (pid <= 0 || worker->process.status()) continue;
    siginfo_t info{};
    // WNOWAIT: kill the worker's group while the zombie still pins its process-group id.
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
      continue;
    kill(-pid, SIGKILL);  // grandchildren left in its group go with it
    int wait_status = 0;
    if (waitpid(pid, &wait_status, 0) == pid) reap(*worker, wait_status);
  }
  leftovers_.reap_adopted();
}

void GroupSupervisor::reap(Worker& worker, int wait_status) {
  worker.process.status_ = exit_status_from_wait(wait_status);
  debuggers_.exited(worker);
  prompts_.forget(worker);
  guard_.forget(worker.process.pid());
  leftovers_.sweep_soon_if_all_reaped();
  if (worker.finished()) {
    on_worker_finished(worker);
    return;
  }
  // Output still open (a descendant holds the pipe, or data is in flight): bounded drain.
  drain_timer_.expires_after(kDrainBound);
  drain_timer_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (ec || gen != assignment_.generation) return;
    for (auto& w : workers_)
      if (w->process.status() && w->output.open_pipes() > 0) {
        output_.close_pipes(*w);
        on_worker_finished(*w);
      }
  });
}

void GroupSupervisor::on_worker_finished(Worker& worker) {
  const ExitStatus& status = *worker.process.status();
  if (!status.success()) {
    output_.flush_through(worker.global_rank);  // its last lines before its failure
    status_.drain();  // an init_failed sent just before the exit is read before the exit is named
  }
  const RankPhase phase_at_exit = worker.phases.phase();
  reports_.set_phase(worker, RankPhase::Exited);
  if (!signals_.stopping() && !status.success() && !worker.process.failure_reported()) {
    // A rank that used torch's @record left its exception in its error file: the root cause.
    std::optional<std::string> recorded;
    if (std::string dir = error_dir_of(assignment_); !dir.empty())
      recorded = summarize_error_file(error_file_path(dir, worker.global_rank, assignment_.generation));
    FailedExit failed = classify_failed_exit(worker, phase_at_exit, recorded);
    report_failure(worker, failed.phase, failed.kind, std::move(failed.detail), std::move(failed.init_signature));
  }
  deliver_outcome_if_done();
}

void GroupSupervisor::deliver_outcome_if_done() {
  if (!outcome_delivered_ && !active()) {
    outcome_delivered_ = true;
    output_.flush();  // every rank's lines before the group's end is said
    reports_.cancel_init_grace();
    signals_.cancel();
    drain_timer_.cancel();
    leftovers_.sweep_now();
    GroupOutcome outcome;
    outcome.generation = assignment_.generation;
    for (auto& w : workers_) outcome.statuses.emplace_back(w->global_rank, *w->process.status());
    if (callbacks_.on_finished) callbacks_.on_finished(outcome);
  }
}

std::string GroupSupervisor::error_file_of(int global_rank) const {
  const std::string dir = error_dir_of(assignment_);
  return dir.empty() ? std::string() : error_file_path(dir, global_rank, assignment_.generation);
}

void GroupSupervisor::report_failure(Worker& worker, FailurePhase phase, FailureKind kind, std::string detail,
                                     std::string init_signature) {
  if (worker.process.failure_reported_ || signals_.stopping()) return;
  worker.process.failure_reported_ = true;
  reports_.stop_settling(worker);
  WorkerFailure failure;
  failure.node_rank = assignment_.node_rank;
  failure.global_rank = worker.global_rank;
  failure.local_rank = worker.local_rank;
  failure.pid = worker.process.pid();
  failure.phase = phase;
  failure.kind = kind;
  failure.status = worker.process.status();
  failure.detail = std::move(detail);
  failure.init_signature = std::move(init_signature);
  failure.tail = worker.debugger.tail_before_post_mortem().value_or(worker.output.tail());
  if (worker.output.log().is_open()) failure.log_file = worker.output.log().path();
  if (callbacks_.on_failure) callbacks_.on_failure(failure);
}

void GroupSupervisor::stop(std::chrono::milliseconds grace) {
  if (!active()) return;
  if (signals_.stop(grace)) reports_.cancel();
}

std::shared_ptr<Worker> GroupSupervisor::worker_of(int global_rank) const {
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->global_rank == global_rank; });
  return it == workers_.end() ? nullptr : *it;
}

bool GroupSupervisor::debugger_input(int global_rank, const std::string& line) {
  const std::shared_ptr<Worker> worker = worker_of(global_rank);
  if (!worker) return false;
  if (worker->debugger.debugging()) return debuggers_.input(worker, line);
  // The console showed the rank's prompt and the typed line (a secret one hidden); the rank's
  // own record of it is the prompt alone, as a line of its log and tail.
  const std::optional<OutputStream> asked_on = worker->prompt.asking_on();
  const std::string asked = worker->prompt.asked_text();
  if (!prompts_.answer(worker, line)) return false;
  if (asked_on) output_.keep_answered_prompt(*worker, *asked_on, asked);
  return true;
}

void GroupSupervisor::set_gdb_attached(const Worker& worker, bool attached) {
  for (auto& w : workers_)
    if (w.get() == &worker) debuggers_.set_gdb_attached(*w, attached);
}

}  // namespace ddplaunch
