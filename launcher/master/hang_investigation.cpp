// HangInvestigation: the hang watch on the 1 s sweep, the stack rounds it and `ddplaunch stacks`
// ask for, and the run history read at the start and written at the end.
#include "master/hang_investigation.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "history/lemon_hosts.h"
#include "wire/launcher_messages.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

namespace {
constexpr double kHistoryInitFactor = 3;  // the init deadline is at least 3 x past runs' p99

// "hang: rank 1 made no progress for 16 s" of the tracker's whole message.
std::string headline_of(const std::string& text) { return text.substr(0, text.find(" — ")); }

std::string history_path(const LaunchConfig& c) {
  if (c.history_file.off) return "";
  return c.history_file.path.empty() ? RunHistory::default_path() : c.history_file.path;
}

std::string signature_of(const CoordinatorSettings& s) {
  return job_signature(s.program_fingerprint, s.config.nodes, s.socket_ifname);
}

}  // namespace

HistorySeed load_history_seed(const CoordinatorSettings& s) {
  const std::string path = history_path(s.config);
  if (path.empty() || s.doctor) return {};
  std::string warning;
  const RunHistory history = RunHistory::load(path, &warning);
  if (!warning.empty()) spdlog::warn("run history: {}", warning);
  HistorySeed seed = history.seed(signature_of(s));
  for (const LemonHost& lemon : lemon_hosts(history.records())) seed.troubled_hosts[lemon.host] = lemon_host_line(lemon);
  return seed;
}

std::string doctor_host_record(const CoordinatorSettings& s) {
  const std::string path = history_path(s.config);
  if (path.empty()) return "hosts that caused trouble: not known, the run history is off (--history-file off)\n";
  return lemon_hosts_section(RunHistory::load(path));
}

void apply_history_seed(const HistorySeed& seed, PolicySettings& p) {
  p.troubled_hosts = seed.troubled_hosts;
  for (const auto& [host, record] : seed.troubled_hosts) p.membership_settings.reserve_hosts.push_back(host);
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

HangInvestigation::HangInvestigation(boost::asio::io_context& io, CoordinatorSettings settings, const HistorySeed& seed,
                                 const JobPolicy& policy, MasterTimeline& timeline, Hooks hooks)
    : settings_(std::move(settings)),
      started_with_(hang_settings(settings_, seed)),
      policy_(policy),
      timeline_(timeline),
      hooks_(std::move(hooks)),
      hang_(started_with_),
      stack_rounds_(io, settings_.config.log_dir, hooks_.ask_nodes) {}

void HangInvestigation::start_generation(Generation generation, int world, PolicyClock::duration report_period) {
  hang_.on_generation(generation, world, PolicyClock::now(), report_period);
  if (generation == Generation{0} && !settings_.doctor)
    spdlog::info("hang detection: {}; at the hang deadline: {} (hang.action {})", hang_.deadlines_text(),
                 hang_action_name(policy_.hang_action()), kHangActionSettingNames.name(settings_.config.hang_action));
}

void HangInvestigation::on_ranks_reported(Generation generation, const std::vector<RankReport>& ranks,
                                        PolicyClock::time_point now) {
  hang_.on_ranks_reported(generation, ranks, now);
}

// Every growth goes with the next save: what the state carries is never below what it carried.
CarriedState HangInvestigation::carried_state() {
  carried_learnt_s_ = std::max(carried_learnt_s_, hang_.tracker().learnt_interval_s());
  return {carried_learnt_s_};
}

// On the 1 s sweep: a save of its own when the growth is worth one.
void HangInvestigation::save_learnt_step_interval() {
  if (!settings_.save_state || hang_.tracker().learnt_interval_s() <= carried_learnt_s_ * kLearntGrowthSaved) return;
  const CarriedState carried = carried_state();
  settings_.save_state(policy_.save_state(PolicyClock::now(), carried), {});
}

void HangInvestigation::seed_from_state(const CarriedState& carried_state) {
  const double carried = carried_state.learnt_step_interval_s;
  carried_learnt_s_ = std::max(carried_learnt_s_, carried);
  if (carried <= started_with_.seeded_interval_s) return;
  HangSettings h = started_with_;
  h.seeded_interval_s = carried;
  h.seeded_from = "learnt by the previous coordinator";
  hang_ = HangWatch(h);
  spdlog::info("hang detection: the largest step interval the previous coordinator learnt ({:.2f} s) carried over; "
               "{}",
               carried, hang_.deadlines_text());
}

std::string HangInvestigation::status_text() const {
  if (policy_.phase() == JobPhase::Joining || settings_.doctor) return "";
  return fmt::format("hang deadlines: {}; action {}\n", hang_.deadlines_text(), hang_action_name(policy_.hang_action()));
}

void HangInvestigation::check(PolicyClock::time_point now) {
  if (policy_.phase() != JobPhase::Running || hang_.generation() != policy_.generation()) return;
  if (auto note = hang_.unwatched_note(now)) spdlog::warn("{}", *note);
  for (HangEvent& e : hang_.check(now)) {
    const std::vector<int>& quiet = hang_.quiet_ranks();
    if (e.level == HangEvent::Level::Suspect) {
      spdlog::warn("{}", e.text);
      request_stacks(headline_of(e.text), quiet, nullptr);
      continue;
    }
    spdlog::error("{}; hang.action: {}", e.text, hang_action_name(policy_.hang_action()));
    request_stacks(headline_of(e.text), quiet,
                   [this, generation = policy_.generation(), text = e.text, quiet,
                    past_deadline = e.ranks](const std::string& stacks, const std::vector<int>& stuck) {
                     hooks_.hang_found(generation, hang_root_cause_rank(stuck, quiet, past_deadline),
                                       text + "\n" + stacks);
                   });
  }
}

long HangInvestigation::request_stacks(std::string heading, std::vector<int> silent, StackRounds::Done done) {
  timeline_.record_instant(timeline::kJobLane, "stack round", "hang", heading);
  std::vector<int> node_ranks;
  int world = 0;
  for (const auto& n : policy_.nodes()) {
    node_ranks.push_back(n.node_rank);
    world += n.facts.nproc;
  }
  return stack_rounds_.start(std::move(heading), std::move(silent), std::move(node_ranks), policy_.generation(), world,
                             std::move(done));
}

void HangInvestigation::on_rank_stacks(int node_rank, const rendezvous::Message& m) {
  auto reply = messages::decode_rank_stacks(m);
  if (reply) stack_rounds_.on_answer(node_rank, reply->request, std::move(reply->stacks), reply->host);
}

std::string HangInvestigation::answer_stacks_query(const StacksRequest& request) {
  using Reply = StacksReply;
  if (!request.round) {
    if (policy_.phase() != JobPhase::Running)
      return encode_stacks_reply(
          {Reply::Kind::Error, 0, fmt::format("no workers to take stacks from: the job is {}", job_phase_name(policy_.phase()))});
    StacksQueryFacts facts;
    facts.now = PolicyClock::now();
    facts.multi_node = policy_.nodes().size() > 1;
    facts.has_token = !settings_.config.token.empty();
    if (last_requested_round_ && stack_rounds_.in_flight(*last_requested_round_)) facts.in_flight = last_requested_round_;
    facts.last_round = last_requested_round_;
    facts.last_started = last_requested_at_;
    const StacksQueryAnswer answer = decide_stacks_query(facts);
    if (answer.kind == StacksQueryAnswer::Kind::Refuse) return encode_stacks_reply({Reply::Kind::Error, 0, answer.refusal});
    if (answer.kind == StacksQueryAnswer::Kind::Join) return encode_stacks_reply({Reply::Kind::Pending, answer.round, {}});
    last_requested_round_ = request_stacks("on request (ddplaunch stacks)", {}, nullptr);
    last_requested_at_ = facts.now;
    return encode_stacks_reply({Reply::Kind::Pending, *last_requested_round_, {}});
  }
  const long round = *request.round;
  if (const std::string* done = stack_rounds_.finished(round)) return encode_stacks_reply({Reply::Kind::Done, round, *done});
  if (stack_rounds_.in_flight(round)) return encode_stacks_reply({Reply::Kind::Pending, round, {}});
  return encode_stacks_reply({Reply::Kind::Error, 0,
                              fmt::format("no stack round {} (the master keeps the last {})", round,
                                          StackRounds::kFinishedKept)});
}

// At the job's end: no stack round keeps the loop alive, and what this run measured is kept
// for the next run's deadlines.
void HangInvestigation::finish(std::vector<HostTrouble> troubled_hosts) {
  stack_rounds_.close();
  if (history_recorded_ || settings_.doctor) return;
  history_recorded_ = true;
  const std::string path = history_path(settings_.config);
  const double step_s = hang_.tracker().learnt_interval_s();
  if (path.empty() || (!policy_.init_seconds() && step_s <= 0 && troubled_hosts.empty())) return;
  RunRecord record;
  record.signature = signature_of(settings_);
  record.unix_time = static_cast<long long>(std::time(nullptr));
  record.init_s = policy_.init_seconds().value_or(-1);
  record.max_step_s = step_s > 0 ? step_s : -1;
  record.troubled_hosts = std::move(troubled_hosts);
  std::string warning;
  RunHistory history = RunHistory::load(path, &warning);
  if (std::string error = history.add_and_save(record); !error.empty())
    spdlog::warn("run history not saved: {}", error);
}

}  // namespace ddplaunch
