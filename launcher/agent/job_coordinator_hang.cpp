// JobCoordinator, hangs: the hang watch on the 1 s sweep, stack rounds across the nodes,
// `ddplaunch stacks`, and the run history read at the start and written at the end.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <optional>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/job_coordinator.h"
#include "history/run_history.h"
#include "ddplaunch/base/time_units.h"
#include "output/worker_output.h"
#include "policy/stacks_query.h"
#include "output/log_directory.h"

namespace ddplaunch {

namespace {
constexpr auto kStackRoundBound = std::chrono::seconds(6);  // a node's tools are bounded far below
constexpr std::size_t kMaxStacksFileBytes = 8 << 20;      // a stacks file of a huge job is cut there
constexpr std::size_t kFinishedStacksKept = 8;
constexpr double kHistoryInitFactor = 3;  // the init deadline is at least 3 x past runs' p99

// "hang: rank 1 made no progress for 16 s" of the tracker's whole message.
std::string headline_of(const std::string& text) { return text.substr(0, text.find(" — ")); }

std::string history_path(const LaunchConfig& c) {
  if (c.history_file == "off") return "";
  return c.history_file.empty() ? RunHistory::default_path() : c.history_file;
}

std::string signature_of(const CoordinatorSettings& s) {
  return job_signature(s.program_fingerprint, s.config.nodes, s.socket_ifname);
}

}  // namespace

HistorySeed load_history_seed(const CoordinatorSettings& s) {
  const std::string path = history_path(s.config);
  if (path.empty() || s.doctor) return {};
  std::string warning;
  HistorySeed seed = RunHistory::load(path, &warning).seed(signature_of(s));
  if (!warning.empty()) spdlog::warn("run history: {}", warning);
  return seed;
}

void apply_history_seed(const HistorySeed& seed, PolicySettings& p) {
  if (seed.init_p99_s <= 0) return;
  p.history_init_s = seed.init_p99_s * kHistoryInitFactor;
  p.history_explained = fmt::format("{:g} x init p99 {}, {}", kHistoryInitFactor, human_duration(seed.init_p99_s),
                                    seed.explained);
}

HangSettings hang_settings(const CoordinatorSettings& s, const HistorySeed& seed) {
  HangSettings h = s.config.hang;
  if (seed.step_p99_s > 0) {
    h.seeded_interval_s = seed.step_p99_s;
    h.seeded_from = seed.explained;
  }
  return h;
}

void JobCoordinator::start_hang_watch(long generation, int world) {
  hang_.on_generation(generation, world, PolicyClock::now());
  if (generation == 0 && !settings_.doctor)
    spdlog::info("hang detection: {}; at the hang deadline: {} (hang.action {})", hang_.deadlines_text(),
                 hang_action_name(policy_.hang_action()), kHangActionSettingNames.name(settings_.config.hang_action));
}

// Every growth goes with the next save (the policy carries it to a coordinator that follows).
void JobCoordinator::note_learnt_step_interval() {
  const double learnt = hang_.tracker().learnt_interval_s();
  if (learnt > policy_.learnt_step_interval_s()) policy_.remember_learnt_step_interval(learnt);
}

// On the 1 s sweep: a save of its own when the policy says the growth is worth one.
void JobCoordinator::save_learnt_step_interval() {
  if (!settings_.save_state || !policy_.learnt_step_interval_worth_a_save(hang_.tracker().learnt_interval_s())) return;
  note_learnt_step_interval();
  settings_.save_state(policy_.save_state(PolicyClock::now()), {});
}

void JobCoordinator::seed_hang_watch_from_state() {
  const double carried = policy_.learnt_step_interval_s();
  HangSettings h = hang_settings(settings_, history_seed_);
  if (carried <= h.seeded_interval_s) return;
  h.seeded_interval_s = carried;
  h.seeded_from = "learnt by the previous coordinator";
  hang_ = HangWatch(h);
  spdlog::info("hang detection: the largest step interval the previous coordinator learnt ({:.2f} s) carried over; "
               "{}",
               carried, hang_.deadlines_text());
}

std::string JobCoordinator::hang_status_text() const {
  if (policy_.phase() == JobPhase::Joining || settings_.doctor) return "";
  return fmt::format("hang deadlines: {}; action {}\n", hang_.deadlines_text(), hang_action_name(policy_.hang_action()));
}

void JobCoordinator::check_hangs(PolicyClock::time_point now) {
  if (policy_.phase() != JobPhase::Running || hang_.generation() != policy_.generation()) return;
  for (HangEvent& e : hang_.check(now)) {
    if (e.level == HangEvent::Level::Suspect) {
      spdlog::warn("{}", e.text);
      request_stacks(headline_of(e.text), e.ranks, nullptr);
      continue;
    }
    spdlog::error("{}; hang.action: {}", e.text, hang_action_name(policy_.hang_action()));
    request_stacks(headline_of(e.text), e.ranks,
                   [this, generation = policy_.generation(), text = e.text](const std::string& stacks,
                                                                              const std::vector<int>& stuck) {
                     carry_out(policy_.on_hang(generation, stuck.front(), text + "\n" + stacks, PolicyClock::now()));
                   });
  }
}

long JobCoordinator::request_stacks(std::string heading, std::vector<int> silent, StacksDone done) {
  const long request = ++next_stack_request_;
  StackRound& round = stack_rounds_[request];
  round.heading = std::move(heading);
  round.stuck = std::move(silent);
  round.done = std::move(done);
  for (const auto& n : policy_.nodes()) round.waiting_for.push_back(n.node_rank);
  round.deadline = std::make_unique<boost::asio::steady_timer>(io_, kStackRoundBound);
  round.deadline->async_wait([this, request](const boost::system::error_code& ec) {
    if (!ec) finish_stack_round(request);
  });
  if (server_) server_->broadcast(messages::encode(policy_.generation(), messages::CollectStacks{request}));
  return request;
}

void JobCoordinator::on_rank_stacks(int node_rank, const rendezvous::Message& m) {
  auto reply = messages::decode_rank_stacks(m);
  if (!reply) return;
  auto it = stack_rounds_.find(reply->request);
  if (it == stack_rounds_.end()) return;  // finished already (a slow node)
  StackRound& round = it->second;
  auto waiting = std::find(round.waiting_for.begin(), round.waiting_for.end(), node_rank);
  if (waiting == round.waiting_for.end()) return;  // not asked, or answered twice
  round.waiting_for.erase(waiting);
  for (auto& s : reply->stacks) {
    s.node = node_rank;  // the connection says who it is, not the payload
    s.host = reply->host;
    round.stacks.push_back(std::move(s));
  }
  if (round.waiting_for.empty()) finish_stack_round(reply->request);
}

void JobCoordinator::finish_stack_round(long request) {
  auto it = stack_rounds_.find(request);
  if (it == stack_rounds_.end()) return;
  StackRound round = std::move(it->second);
  stack_rounds_.erase(it);
  round.deadline->cancel();
  int world = 0;
  for (const auto& n : policy_.nodes()) world += n.facts.nproc;
  std::string text = render_grouped_stacks(round.stacks, round.stuck, round.heading, world);
  const std::vector<int> earlier =
      stuck_verdict_generation_ == policy_.generation() ? stuck_verdict_ : std::vector<int>{};
  const std::vector<int> stuck = likely_stuck(round.stacks, round.stuck, earlier);
  if (!round.stuck.empty() && stuck.size() < round.stuck.size()) {
    stuck_verdict_ = stuck;
    stuck_verdict_generation_ = policy_.generation();
  }
  if (std::string file = write_stacks_file(request, text); !file.empty()) text += "  (also in " + file + ")\n";
  if (round.stuck.empty()) spdlog::info("stacks taken on request (ddplaunch stacks), round {}", request);
  else spdlog::warn("{}", text);
  finished_stacks_[request] = text;
  while (finished_stacks_.size() > kFinishedStacksKept) finished_stacks_.erase(finished_stacks_.begin());
  if (round.done) round.done(text, stuck);
}

// --log-dir/stacks-<round>.txt, in the directory opened once, refusing a symlink like the rank
// logs do.
std::string JobCoordinator::write_stacks_file(long request, const std::string& text) const {
  if (settings_.config.log_dir.empty()) return "";
  auto dir = LogDirectory::open_once(settings_.config.log_dir);
  if (!dir) return "";
  const std::string name = fmt::format("stacks-{}.txt", request);
  const std::string path = (*dir)->shown(name);
  // Only the newest kStacksFilesKept rounds stay (rounds are numbered in order).
  ::unlinkat((*dir)->fd(), fmt::format("stacks-{}.txt", request - kStacksFilesKept).c_str(), 0);
  int fd = (*dir)->open_file(name, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return "";
  struct stat opened {};
  const bool regular = ::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode);  // not a planted FIFO
  const std::string_view bounded = std::string_view(text).substr(0, kMaxStacksFileBytes);
  if (regular) write_fully(fd, bounded);
  ::close(fd);
  return regular ? path : "";
}

std::string JobCoordinator::answer_query(const std::string& query) {
  using Reply = StacksReply;
  const std::optional<StacksRequest> request = decode_stacks_request(query);
  if (!request) return "error: unknown query '" + query.substr(0, 40) + "'";
  if (!request->round) {
    if (policy_.phase() != JobPhase::Running)
      return encode_stacks_reply(
          {Reply::Kind::Error, 0, fmt::format("no workers to take stacks from: the job is {}", job_phase_name(policy_.phase()))});
    StacksQueryFacts facts;
    facts.now = PolicyClock::now();
    facts.multi_node = policy_.nodes().size() > 1;
    facts.has_token = !settings_.config.token.empty();
    if (last_requested_round_ && stack_rounds_.count(*last_requested_round_)) facts.in_flight = last_requested_round_;
    facts.last_round = last_requested_round_;
    facts.last_started = last_requested_at_;
    const StacksQueryAnswer answer = decide_stacks_query(facts);
    if (answer.kind == StacksQueryAnswer::Kind::Refuse) return encode_stacks_reply({Reply::Kind::Error, 0, answer.refusal});
    if (answer.kind == StacksQueryAnswer::Kind::Join) return encode_stacks_reply({Reply::Kind::Pending, answer.round, {}});
    last_requested_round_ = request_stacks("on request (ddplaunch stacks)", {}, nullptr);
    last_requested_at_ = facts.now;
    return encode_stacks_reply({Reply::Kind::Pending, *last_requested_round_, {}});
  }
  const long round = *request->round;
  if (auto done = finished_stacks_.find(round); done != finished_stacks_.end())
    return encode_stacks_reply({Reply::Kind::Done, round, done->second});
  if (stack_rounds_.count(round)) return encode_stacks_reply({Reply::Kind::Pending, round, {}});
  return encode_stacks_reply(
      {Reply::Kind::Error, 0, fmt::format("no stack round {} (the master keeps the last {})", round, kFinishedStacksKept)});
}

// At the job's end: no stack round keeps the loop alive, and what this run measured is kept
// for the next run's deadlines.
void JobCoordinator::finish_hang_watch() {
  for (auto& [request, round] : stack_rounds_) round.deadline->cancel();
  stack_rounds_.clear();
  if (history_recorded_ || settings_.doctor) return;
  history_recorded_ = true;
  const std::string path = history_path(settings_.config);
  const double step_s = hang_.tracker().learnt_interval_s();
  if (path.empty() || (!policy_.init_seconds() && step_s <= 0)) return;
  RunRecord record;
  record.signature = signature_of(settings_);
  record.unix_time = static_cast<long long>(std::time(nullptr));
  record.init_s = policy_.init_seconds().value_or(-1);
  record.max_step_s = step_s > 0 ? step_s : -1;
  std::string warning;
  RunHistory history = RunHistory::load(path, &warning);
  if (std::string error = history.add_and_save(record); !error.empty())
    spdlog::warn("run history not saved: {}", error);
}

}  // namespace ddplaunch
