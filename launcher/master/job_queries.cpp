// JobQueries: the master's answers to status connections, typed queries by their ask, earlier
// clients' text queries by their text.
#include "master/job_queries.h"

#include "timeline/time_account.h"

#include <fmt/format.h>

#include "wire/launcher_messages.h"
#include "policy/stacks_query.h"
#include "seat/etcd_seat.h"

namespace ddplaunch {

JobQueries::JobQueries(const LaunchConfig& config, const JobPolicy& policy, HangInvestigation& hang_investigation,
                       const StragglerReports& stragglers,
                       const MasterTimeline& timeline, std::function<JobChannel*()> channel)
    : job_id_(config.job_id),
      token_(config.token),
      expected_nodes_(config.nodes),
      policy_(policy),
      hang_investigation_(hang_investigation),
      stragglers_(stragglers),
      timeline_(timeline),
      channel_(std::move(channel)),
      tails_([this](int rank, int seconds) {
        if (JobChannel* nodes = channel_())
          nodes->broadcast(messages::encode(policy_.generation(), messages::FollowRank{rank, seconds}));
      }) {}

std::string JobQueries::status_text() const {
  return tables_text() + (etcd_seat_ ? "\n" + etcd_seat_->status_line() + "\n" : "");
}

std::string JobQueries::tables_text() const {
  std::string members = policy_.membership_table(PolicyClock::now());
  if (!members.empty()) members = "\nmembership (active, spare, excluded, lost):\n" + members;
  const JobChannel* nodes = channel_();
  if (policy_.phase() == JobPhase::Joining && nodes)  // nothing planned yet: who is here so far
    return render_joining_table(job_id_, expected_nodes_, nodes->joined_nodes()) + members;
  return render_status_table(job_id_, policy_, status_extras()) + members + hang_investigation_.status_text();
}

std::string JobQueries::answer(const std::string& query) {
  if (is_inspection_query(query)) {
    const Result<InspectionQuery> typed = decode_inspection_query(query);
    return encode_inspection_reply(typed ? reply(*typed) : refused_reply(typed.error, standing()));
  }
  // Earlier clients' text queries.
  if (auto tail = decode_tail_request(query)) return encode_tail_reply(tail_reply(*tail));
  if (query == kTimelineJsonQuery) {
    const InspectionReply timeline = timeline_reply();
    return timeline.kind == ReplyKind::Refused ? "error: " + timeline.text : timeline.text;
  }
  if (query == kStatusJsonQuery) return render_status_json(job_id_, policy_, status_extras());
  if (auto stacks = decode_stacks_request(query)) return hang_investigation_.answer_stacks_query(*stacks);
  return "error: unknown query '" + query.substr(0, 40) + "'";
}

InspectionReply JobQueries::reply(const InspectionQuery& query) {
  InspectionReply out;
  out.kind = ReplyKind::Answer;
  switch (query.ask) {
    case InspectionAsk::StatusTable: out.text = status_text(); break;
    case InspectionAsk::StatusJson: out.text = render_status_json(job_id_, policy_, status_extras()); break;
    case InspectionAsk::Timeline: out = timeline_reply(); break;
    case InspectionAsk::Tail: {
      TailReply tail = tail_reply({query.rank, query.from});
      if (!tail.error.empty()) out = refused_reply(std::move(tail.error));
      else {
        out.text = std::move(tail.slice.lines);
        out.next = tail.slice.next;
        out.missed = tail.slice.missed;
      }
      break;
    }
    case InspectionAsk::Stacks: out = stacks_reply(query.from); break;
    case InspectionAsk::DebugPoll:
    case InspectionAsk::DebugLine: out = console_reply(query); break;
  }
  out.job = standing();
  return out;
}

JobStanding JobQueries::standing() const {
  JobStanding job;
  job.phase = std::string(job_phase_name(policy_.phase()));
  if (policy_.phase() != JobPhase::Ended) return job;
  job.exit_status = timeline_.exit_code().value_or(1);  // none: the job was refused, or its join aborted
  job.end = job_end_of_exit_status(job.exit_status);
  if (job.end != JobEnd::Succeeded) job.cause = timeline_.root_cause();
  return job;
}

void JobQueries::on_rank_output(const rendezvous::Message& m) {
  if (auto output = messages::decode_rank_output(m)) tails_.on_output(*output);
}

// The same rule as for stacks: the lines of a multi-node job's ranks go only to someone who
// proved the job's token (a job without one answers status, not its ranks' output).
TailReply JobQueries::tail_reply(const TailRequest& request) {
  if (policy_.nodes().size() > 1 && token_.empty())
    return {{}, "this multi-node job has no token, so its ranks' output is not relayed: start it "
                "with DDPLAUNCH_TOKEN or --token-file (ddplaunch-srun and --hosts make one)"};
  int world = 0;
  for (const auto& n : policy_.nodes()) world += n.facts.nproc;
  if (world == 0) return {{}, "no workers run yet: the job is still joining"};
  if (request.rank < 0) return {{}, "a tail needs a rank (0 or more)"};
  return tails_.reply(request, world, RankTailRelay::Clock::now());
}

InspectionReply JobQueries::timeline_reply() const {
  std::string json = timeline_.json();
  if (json.size() > kMaxTimelineReplyBytes)
    return refused_reply(fmt::format("the job's timeline is {} KiB, more than one answer carries ({} KiB): the "
                                     "master writes it whole at the job's end with --trace FILE or --log-dir DIR",
                                     json.size() / 1024, kMaxTimelineReplyBytes / 1024));
  InspectionReply out;
  out.kind = ReplyKind::Answer;
  out.text = std::move(json);
  return out;
}

// The hang watch's rounds (their text form is the policy's codec, decoded back to its record).
InspectionReply JobQueries::stacks_reply(long round) {
  const StacksReply stacks = decode_stacks_reply(
      hang_investigation_.answer_stacks_query(round < 0 ? StacksRequest{} : StacksRequest{round}));
  InspectionReply out;
  switch (stacks.kind) {
    case StacksReply::Kind::Error: return refused_reply(stacks.text);
    case StacksReply::Kind::Pending: out.kind = ReplyKind::Pending; break;
    case StacksReply::Kind::Done: out.kind = ReplyKind::Answer; break;
  }
  out.next = stacks.round;
  out.text = stacks.text;
  return out;
}

// The asker proved the job's token, or this launcher's own (its user, on this node).
InspectionReply JobQueries::console_reply(const InspectionQuery& query) {
  if (!console_) return refused_reply("this launcher has no debug console");
  if (query.ask == InspectionAsk::DebugLine) return console_->take_line(query.line);
  return console_->transcript_after(query.from < 0 ? 0 : static_cast<std::size_t>(query.from));
}

StatusExtras JobQueries::status_extras() const {
  const timeline::TimeAccount account = timeline_.time_account();
  return {reporting_nodes_,
          hang_investigation_.tracker().suspect_ranks(),
          hang_investigation_.tracker().learnt_interval_s(),
          stragglers_.compute_shares(PolicyClock::now()),
          stragglers_.straggler(),
          stragglers_.cpu_cores(),
          stragglers_.explaining_signals(),
          timeline::time_account_line(account),
          timeline::time_account_json(account)};
}

}  // namespace ddplaunch
