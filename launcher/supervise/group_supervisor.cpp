// GroupSupervisor: spawn, output, status, exit, deadlines and stop of one generation.
#include "supervise/group_supervisor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <fmt/format.h>

#include "supervise/descendant_sweep.h"
#include "env/error_file.h"
#include "supervise/init_signatures.h"
#include "supervise/own_tools.h"
#include "supervise/process_spawner.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

namespace {
constexpr auto kDrainBound = std::chrono::seconds(2);  // output EOF after a worker was reaped
constexpr auto kInitFailureSettle = std::chrono::milliseconds(500);
// From the last worker's exit to the sweep of what it left behind: the loop first reads the
// output already in the pipes, in the order written (a sweep blocks it for a moment).
constexpr auto kSweepDelay = std::chrono::milliseconds(100);
}  // namespace

GroupSupervisor::GroupSupervisor(boost::asio::io_context& io, OrphanGuard& guard, GroupCallbacks callbacks)
    : io_(io),
      guard_(guard),
      callbacks_(std::move(callbacks)),
      child_exits_(io, SIGCHLD),
      init_grace_(io),
      kill_timer_(io),
      drain_timer_(io),
      sweep_timer_(io),
      printer_(io) {
  wait_for_child_exits();
}

GroupSupervisor::~GroupSupervisor() {
  kill_all(SIGKILL);
  for (auto& w : workers_)
    if (w->pid > 0 && !w->status) waitpid(w->pid, nullptr, 0);
}

void GroupSupervisor::close() {
  closed_ = true;
  printer_.close();
  kill_all(SIGKILL);
  sweep();  // untagged orphans are out of reach once we exit
  guard_.job_swept();  // no worker starts after this: the guard need not scan the machine at our exit
  boost::system::error_code ignored;
  child_exits_.cancel(ignored);
  init_grace_.cancel();
  kill_timer_.cancel();
  drain_timer_.cancel();
  sweep_timer_.cancel();
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
  workers_.clear();
  printer_.start(spec.collapse_lines && spec.assignment.local_world_size > 1, spec.assignment.node_rank,
                 spec.assignment.node_count);
  assignment_ = spec.assignment;
  routing_spec_ = RoutingSpec{spec.redirects, spec.tee, !spec.log_dir.empty(), spec.local_ranks_filter};
  stopping_ = false;
  outcome_delivered_ = false;

  for (int local = 0; local < spec.assignment.local_world_size; ++local) {
    auto worker = std::make_shared<Worker>(io_, local, spec.assignment.rank_offset + local);
    auto prefix_template = spec.base_env.find("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
    // torchrun prints its TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE exactly as given, then the line.
    if (prefix_template != spec.base_env.end()) worker->prefix_separator = "";
    worker->prefix = prefix_template != spec.base_env.end()
                         ? prefix_from_template(prefix_template->second, spec.assignment.role, worker->global_rank, local)
                         : worker_prefix(spec.assignment.node_rank, spec.assignment.node_count, worker->global_rank);
    // torchrun's --local-ranks-filter: the others still go to log files and failure reports.
    worker->routing = route_streams(spec.redirects, spec.tee, !spec.log_dir.empty(), local,
                                    shown_by_filters(local, worker->global_rank, spec.local_ranks_filter, spec.ranks_filter));
    workers_.push_back(worker);
  }
  std::vector<SpawnRequest> requests;
  for (auto& worker : workers_) {
    if (!spec.log_dir.empty() && worker->routing.any_file()) {
      std::string error = worker->log.open(spec.log_dir, worker->global_rank, assignment_.generation,
                                           spec.assignment.node_rank, spec.hostname);
      if (!error.empty()) write_prefixed_line(OutputStream::Stderr, "[ddplaunch]", error);
    }
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
    Worker* worker = workers_[i].get();
    const SpawnRequest& request = requests[i];
    const SpawnedProcess& process = spawned[i];
    if (process.pid < 0) break;  // the last result: reported below
    worker->pid = process.pid;
    guard_.watch(process.pid);
    worker->stdout_pipe.assign(process.stdout_fd);
    worker->stderr_pipe.assign(process.stderr_fd);
    if (process.stdin_fd >= 0) worker->stdin_pipe.assign(process.stdin_fd);
    worker->open_pipes = 2;
    read_output(*worker, true);
    read_output(*worker, false);
    worker->paused = request.start_stopped;
    if (request.start_stopped && callbacks_.on_paused) callbacks_.on_paused(*worker);
  }
  // Workers not reached because an earlier spawn failed count as never started.
  for (auto& worker : workers_)
    if (worker->pid < 0 && !worker->status) worker->status = ExitStatus{false, 127, 0, false};

  if (!spawned.empty() && spawned.back().pid < 0) {
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
    return;
  }
  // Opt-in for programs without any shim: count them as running after init_grace_s, so
  // that a late failure is a runtime one. Nothing is ever killed by this timer.
  if (spec.init_grace_s > 0) {
    init_grace_.expires_after(seconds_to_ms(spec.init_grace_s));
    init_grace_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
      if (ec || gen != assignment_.generation) return;
      for (auto& w : workers_)
        if (w->phase == RankPhase::Setup && w->init_entries == 0 && !w->status) set_phase(*w, RankPhase::Running);
    });
  }
}

void GroupSupervisor::read_output(Worker& worker, bool is_stdout) {
  auto& pipe = is_stdout ? worker.stdout_pipe : worker.stderr_pipe;
  char* buffer = is_stdout ? worker.stdout_buffer : worker.stderr_buffer;
  auto self = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w.get() == &worker; });
  std::shared_ptr<Worker> keep = *self;
  pipe.async_read_some(boost::asio::buffer(buffer, sizeof worker.stdout_buffer),
                       [this, keep, is_stdout](const boost::system::error_code& ec, std::size_t n) {
                         Worker& w = *keep;
                         const OutputStream stream = is_stdout ? OutputStream::Stdout : OutputStream::Stderr;
                         auto& splitter = is_stdout ? w.stdout_lines : w.stderr_lines;
                         auto emit = [&](std::string_view line) { on_line(w, stream, line); };
                         if (!ec) {
                           splitter.feed(std::string_view(is_stdout ? w.stdout_buffer : w.stderr_buffer, n), emit);
                           if (is_stdout) notice_debugger(w);
                           read_output(w, is_stdout);
                           return;
                         }
                         if (ec == boost::asio::error::operation_aborted && w.open_pipes == 0) return;  // closed by us
                         splitter.finish(emit);
                         if (is_stdout) print_held_lines(w);
                         auto& pipe = is_stdout ? w.stdout_pipe : w.stderr_pipe;
                         boost::system::error_code ignored;
                         if (pipe.is_open()) pipe.close(ignored);
                         if (w.open_pipes > 0 && --w.open_pipes == 0 && w.finished()) on_worker_finished(w);
                       });
}

void GroupSupervisor::on_line(Worker& worker, OutputStream stream, std::string_view line) {
  const bool is_stdout = stream == OutputStream::Stdout;
  const bool to_terminal = is_stdout ? worker.routing.stdout_to_terminal : worker.routing.stderr_to_terminal;
  // pdb's location lines wait a moment for its prompt (Worker::held_lines); a rank in its
  // debugger: its stdout is the debugger's, for the console (whatever the filters say: a
  // stopped rank is always shown there).
  const bool pdb_location = is_stdout && !worker.debugging && worker.stdin_pipe.is_open() &&
                            (debug::parse_pdb_location(line) ||
                             (!worker.held_lines.empty() && debug::parse_pdb_code_line(line)));
  if (pdb_location && to_terminal && worker.held_lines.size() < 2) {
    worker.held_lines.emplace_back(line);
    worker.held_lines_timer.expires_after(Worker::kHeldLinesWait);
    worker.held_lines_timer.async_wait([this, &worker, gen = assignment_.generation](const boost::system::error_code& ec) {
      if (!ec && gen == assignment_.generation) print_held_lines(worker);
    });
  } else if (is_stdout && worker.debugging && worker.debugger_output.size() < Worker::kMaxStdinQueue) {
    worker.debugger_output.append(without_progress_mark(line)).append("\n");
  } else if (to_terminal) {
    print_held_lines(worker);
    printer_.print(worker.global_rank, worker.prefix, worker.prefix_separator, stream, line);
  }
  if (is_stdout ? worker.routing.stdout_to_file : worker.routing.stderr_to_file) worker.log.write_line(stream, line);
  if (!followed_.empty() && followed_.count(worker.global_rank) && callbacks_.on_followed_line)
    callbacks_.on_followed_line(worker.global_rank, without_progress_mark(line));
  worker.remember(line);
}

void GroupSupervisor::show_ranks(const std::vector<int>& ranks_filter) {
  const RoutingSpec& r = routing_spec_;
  for (auto& w : workers_)
    w->routing = route_streams(r.redirects, r.tee, r.log_files, w->local_rank,
                               shown_by_filters(w->local_rank, w->global_rank, r.local_ranks_filter, ranks_filter));
}

void GroupSupervisor::print_held_lines(Worker& worker) {
  worker.held_lines_timer.cancel();
  if (!worker.held_lines.empty()) printer_.flush();
  for (const auto& held : worker.held_lines)
    write_prefixed_line(OutputStream::Stdout, worker.prefix, held, worker.prefix_separator);
  worker.held_lines.clear();
}

void GroupSupervisor::set_phase(Worker& worker, RankPhase phase) {
  worker.phase = phase;
  if (callbacks_.on_phases_changed) callbacks_.on_phases_changed();
}

void GroupSupervisor::handle_status(const contract::StatusMessage& m) {
  if (m.generation != assignment_.generation) return;  // a late report from a previous generation
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->global_rank == m.rank; });
  if (it == workers_.end() || (*it)->status) return;
  Worker& w = **it;
  // Only the rank's own worker (or a process it started) speaks for that rank: a report from
  // another process (another rank's worker, any process of this user) is dropped, once said.
  if (!descends_from(static_cast<pid_t>(m.pid), w.pid)) {
    if (!w.foreign_report_seen)
      write_prefixed_line(OutputStream::Stderr, "[ddplaunch]",
                          fmt::format("ignored a status report for rank {} from pid {}, which is not that rank's "
                                      "worker nor one of its processes (further ones are ignored silently)",
                                      w.global_rank, m.pid));
    w.foreign_report_seen = true;
    return;
  }
  switch (m.event) {
    case contract::StatusEvent::InitBegin:
      ++w.init_entries;  // a later communicator (lazy NCCL init, a new sub-group) is init again
      set_phase(w, RankPhase::Init);
      break;
    case contract::StatusEvent::InitOk:
      if (w.init_failure_detail.empty()) set_phase(w, RankPhase::Running);
      break;
    case contract::StatusEvent::InitFailed: {
      w.init_failure_detail = m.detail;
      // A worker that reports init_failed usually prints its error and exits at once: report
      // at its exit, with those last lines; if it lingers, report after a short settle time
      // anyway, since the other ranks may be hanging in init meanwhile.
      auto keep = *it;
      w.settle_timer.expires_after(kInitFailureSettle);
      w.settle_timer.async_wait([this, keep, gen = assignment_.generation](const boost::system::error_code& ec) {
        if (!ec && gen == assignment_.generation && !keep->status)
          report_failure(*keep, FailurePhase::Init, FailureKind::InitFailed, keep->init_failure_detail);
      });
      break;
    }
    case contract::StatusEvent::Heartbeat:
      break;
    case contract::StatusEvent::Step:          // progress: for hang detection
    case contract::StatusEvent::SectionBegin:
    case contract::StatusEvent::SectionEnd:
      if (record_progress(w, m) && callbacks_.on_phases_changed) callbacks_.on_phases_changed();
      break;
  }
}

void GroupSupervisor::reap_exited_children() {
  for (auto& worker : workers_) {
    if (worker->pid <= 0 || worker->status) continue;
    siginfo_t info{};
    // WNOWAIT: kill the worker's group while the zombie still pins its process-group id.
    if (waitid(P_PID, static_cast<id_t>(worker->pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
      continue;
    kill(-worker->pid, SIGKILL);  // grandchildren left in its group go with it
    int wait_status = 0;
    if (waitpid(worker->pid, &wait_status, 0) == worker->pid) reap(*worker, wait_status);
  }
  // As a subreaper the launcher also inherits its workers' orphans: reap those, never a
  // worker whose exit is still to be read above.
  if (is_subreaper()) {
    own_tools::while_held([this](const std::vector<pid_t>& tools) {  // their runner reaps them
      std::vector<pid_t> keep = tools;
      for (auto& w : workers_)
        if (w->pid > 0 && !w->status) keep.push_back(w->pid);
      reap_adopted_children(keep);
    });
  }
}

// Every worker of this generation is reaped: whatever they started is swept shortly after
// (it may hold their output pipes open), and again before the outcome is delivered, so none
// holds a port, a GPU or a pipe into the next generation or past the end of the job.
void GroupSupervisor::sweep_descendants_if_all_reaped() {
  if (std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->pid > 0 && !w->status; })) return;
  sweep_timer_.expires_after(kSweepDelay);
  sweep_timer_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (!ec && gen == assignment_.generation && !outcome_delivered_)
      sweep();
  });
}

// Kills what the job left behind: never the guard, nor a tool the launcher runs for itself
// (own_tools.h: held while the sweep looks, so none is started unregistered meanwhile).
void GroupSupervisor::sweep() const {
  own_tools::while_held([this](const std::vector<pid_t>& tools) {
    std::vector<pid_t> spared = tools;
    if (guard_.pid() > 0) spared.push_back(guard_.pid());
    sweep_job_processes(guard_.job_tag(), spared);
  });
}

void GroupSupervisor::reap(Worker& worker, int wait_status) {
  worker.status = exit_status_from_wait(wait_status);
  leave_debugger(worker);
  boost::system::error_code ignored;
  worker.stdin_pipe.close(ignored);
  guard_.forget(worker.pid);
  sweep_descendants_if_all_reaped();
  if (worker.finished()) {
    on_worker_finished(worker);
    return;
  }
  // Output still open (a descendant holds the pipe, or data is in flight): bounded drain.
  drain_timer_.expires_after(kDrainBound);
  drain_timer_.async_wait([this, gen = assignment_.generation](const boost::system::error_code& ec) {
    if (ec || gen != assignment_.generation) return;
    for (auto& w : workers_)
      if (w->status && w->open_pipes > 0) close_pipes(*w);
  });
}

void GroupSupervisor::close_pipes(Worker& worker) {
  auto emit_out = [&](std::string_view line) { on_line(worker, OutputStream::Stdout, line); };
  auto emit_err = [&](std::string_view line) { on_line(worker, OutputStream::Stderr, line); };
  worker.stdout_lines.finish(emit_out);
  worker.stderr_lines.finish(emit_err);
  print_held_lines(worker);
  worker.open_pipes = 0;
  boost::system::error_code ignored;
  worker.stdout_pipe.close(ignored);
  worker.stderr_pipe.close(ignored);
  on_worker_finished(worker);
}

void GroupSupervisor::on_worker_finished(Worker& worker) {
  const ExitStatus& status = *worker.status;
  if (!status.success()) printer_.flush_through(worker.global_rank);  // its last lines before its failure
  if (callbacks_.drain_status && !status.success()) callbacks_.drain_status();
  const RankPhase phase_at_exit = worker.phase;
  set_phase(worker, RankPhase::Exited);
  if (!stopping_ && !status.success() && !worker.failure_reported) {
    // Classify where it failed (DESIGN.md "Phases of a worker"): init errors in its output
    // (a lazily created NCCL communicator failing while "running") make it an init failure;
    // otherwise the phase the shim last reported: setup (no init report: the program's own
    // failure), init, or running. The policy decides which budget that spends.
    auto signature = match_init_signature(worker.tail);
    // A rank that used torch's @record left its exception in its error file: the root cause.
    std::optional<std::string> recorded;
    if (std::string dir = error_dir_of(assignment_); !dir.empty())
      recorded = summarize_error_file(error_file_path(dir, worker.global_rank, assignment_.generation));
    const bool init_reported = !worker.init_failure_detail.empty();
    const FailurePhase phase = signature || init_reported        ? FailurePhase::Init
                               : phase_at_exit == RankPhase::Setup ? FailurePhase::Setup
                               : phase_at_exit == RankPhase::Init  ? FailurePhase::Init
                                                                   : FailurePhase::Runtime;
    std::string detail = recorded ? *recorded
                         : init_reported ? worker.init_failure_detail
                         : signature ? fmt::format("output matches '{}'", signature->signature)
                         : phase_at_exit == RankPhase::Setup
                             ? std::string("exited in setup, before it called init_process_group")
                         : phase_at_exit == RankPhase::Init ? std::string("exited during process-group init")
                                                            : std::string();
    report_failure(worker, phase, init_reported ? FailureKind::InitFailed : FailureKind::Exited, detail,
                   signature ? signature->signature : std::string());
  }
  deliver_outcome_if_done();
}

void GroupSupervisor::deliver_outcome_if_done() {
  if (!outcome_delivered_ && !active()) {
    outcome_delivered_ = true;
    printer_.flush();  // every rank's lines before the group's end is said
    init_grace_.cancel();
    kill_timer_.cancel();
    drain_timer_.cancel();
    sweep_timer_.cancel();
    sweep();
    GroupOutcome outcome;
    outcome.generation = assignment_.generation;
    for (auto& w : workers_) outcome.statuses.emplace_back(w->global_rank, *w->status);
    if (callbacks_.on_finished) callbacks_.on_finished(outcome);
  }
}

std::string GroupSupervisor::error_file_of(int global_rank) const {
  const std::string dir = error_dir_of(assignment_);
  return dir.empty() ? std::string() : error_file_path(dir, global_rank, assignment_.generation);
}

void GroupSupervisor::report_failure(Worker& worker, FailurePhase phase, FailureKind kind, std::string detail,
                                     std::string init_signature) {
  if (worker.failure_reported || stopping_) return;
  worker.failure_reported = true;
  worker.settle_timer.cancel();
  WorkerFailure failure;
  failure.node_rank = assignment_.node_rank;
  failure.global_rank = worker.global_rank;
  failure.local_rank = worker.local_rank;
  failure.pid = worker.pid;
  failure.phase = phase;
  failure.kind = kind;
  failure.status = worker.status;
  failure.detail = std::move(detail);
  failure.init_signature = std::move(init_signature);
  failure.tail = worker.tail;
  if (worker.log.is_open()) failure.log_file = worker.log.path();
  if (callbacks_.on_failure) callbacks_.on_failure(failure);
}

void GroupSupervisor::kill_all(int signal) {
  for (auto& w : workers_)
    if (w->pid > 0 && !w->status) kill(-w->pid, signal);
}

void GroupSupervisor::stop(std::chrono::milliseconds grace) {
  if (!active() || (stopping_ && grace.count() > 0)) return;
  stopping_ = true;
  init_grace_.cancel();
  for (auto& w : workers_) w->settle_timer.cancel();
  resume_paused();
  kill_all(grace.count() > 0 ? SIGTERM : SIGKILL);
  kill_all(SIGCONT);  // a stopped worker (paused, or in a debugger's hands) cannot act on SIGTERM
  kill_timer_.expires_after(grace);
  kill_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) kill_all(SIGKILL);
  });
}

int GroupSupervisor::forward_signal(int signal) {
  int sent = 0;
  for (auto& w : workers_)
    if (w->pid > 0 && !w->status && kill(w->pid, signal) == 0) ++sent;
  return sent;
}

void GroupSupervisor::resume_paused() {
  for (auto& w : workers_) {
    if (w->pid > 0 && !w->status && w->paused) kill(-w->pid, SIGCONT);
    w->paused = false;
  }
}

// The debugger's prompt is the last thing the worker wrote, unterminated: it waits for a
// line. The first prompt is a stop (the location is in the lines pdb printed just before);
// later ones end the answer to a command.
void GroupSupervisor::notice_debugger(Worker& worker) {
  const auto prompt = debug::debugger_prompt(worker.stdout_lines.unterminated());
  if (prompt) worker.stdout_lines.drop_unterminated();
  if (prompt && !worker.debugging && worker.stdin_pipe.is_open()) {
    debug::StopLocation where;
    std::string reason;  // a post-mortem stop: the shim named the exception just before pdb
    for (auto line = worker.tail.rbegin(); line != worker.tail.rend(); ++line) {
      if (auto code = debug::parse_pdb_code_line(*line); code && where.code.empty()) where.code = *code;
      if (auto found = debug::parse_pdb_location(*line); found && where.file.empty()) {
        found->code = where.code;
        where = *found;
      } else if (!where.file.empty() && line->rfind(contract::kPostMortemMark, 0) == 0) {
        reason = "raised " + line->substr(std::string_view(contract::kPostMortemMark).size());
        break;
      } else if (!where.file.empty()) {
        break;
      }
    }
    worker.debugging = true;
    worker.debugger_output.clear();
    worker.held_lines.clear();  // pdb's own location lines: the console names the place
    worker.held_lines_timer.cancel();
    if (callbacks_.on_debugger_stopped) callbacks_.on_debugger_stopped(worker, where, reason);
    if (callbacks_.on_phases_changed) callbacks_.on_phases_changed();
    return;
  }
  if (!worker.debugging || (!prompt && worker.debugger_output.empty())) return;
  std::string lines;
  lines.swap(worker.debugger_output);
  if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, prompt.has_value());
}

void GroupSupervisor::leave_debugger(Worker& worker) {
  if (!worker.debugging) return;
  worker.debugging = false;
  if (!worker.debugger_output.empty()) {  // its last words in the debugger, then it ran on
    std::string lines;
    lines.swap(worker.debugger_output);
    if (callbacks_.on_debugger_output) callbacks_.on_debugger_output(worker, lines, false);
  }
  if (callbacks_.on_debugger_left) callbacks_.on_debugger_left(worker);
  if (callbacks_.on_phases_changed) callbacks_.on_phases_changed();
}

bool GroupSupervisor::debugger_input(int global_rank, const std::string& line) {
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->global_rank == global_rank; });
  if (it == workers_.end()) return false;
  Worker& w = **it;
  if (!w.debugging || !w.stdin_pipe.is_open() || w.status) return false;
  if (w.stdin_queue.size() + line.size() + 1 > Worker::kMaxStdinQueue) return false;
  w.stdin_queue.append(line).append("\n");
  if (debug::classify_debugger_command(line) != debug::DebuggerCommand::Other) leave_debugger(w);
  write_stdin(*it);
  return true;
}

void GroupSupervisor::write_stdin(const std::shared_ptr<Worker>& worker) {
  if (worker->stdin_writing || worker->stdin_queue.empty() || !worker->stdin_pipe.is_open()) return;
  worker->stdin_writing = true;
  auto text = std::make_shared<std::string>(std::move(worker->stdin_queue));
  worker->stdin_queue.clear();
  boost::asio::async_write(worker->stdin_pipe, boost::asio::buffer(*text),
                           [this, worker, text](const boost::system::error_code& ec, std::size_t) {
                             worker->stdin_writing = false;
                             if (ec) return;  // it exited, or closed its stdin: nothing reads the rest
                             write_stdin(worker);
                           });
}

}  // namespace ddplaunch
