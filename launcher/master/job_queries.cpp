// JobQueries: the master's answers to status connections, dispatched by the query's text.
#include "master/job_queries.h"

#include <fmt/format.h>

#include "wire/launcher_messages.h"
#include "policy/stacks_query.h"

namespace ddplaunch {

JobQueries::JobQueries(const LaunchConfig& config, const JobPolicy& policy, MasterHangWatch& hang_watch,
                       const MasterTimeline& timeline, std::function<JobChannel*()> channel)
    : job_id_(config.job_id),
      token_(config.token),
      expected_nodes_(config.nodes),
      policy_(policy),
      hang_watch_(hang_watch),
      timeline_(timeline),
      channel_(std::move(channel)),
      tails_([this](int rank, int seconds) {
        if (JobChannel* nodes = channel_())
          nodes->broadcast(messages::encode(policy_.generation(), messages::FollowRank{rank, seconds}));
      }) {}

std::string JobQueries::status_text() const {
  std::string members = policy_.membership_table(PolicyClock::now());
  if (!members.empty()) members = "\nmembership (active, spare, excluded, lost):\n" + members;
  const JobChannel* nodes = channel_();
  if (policy_.phase() == JobPhase::Joining && nodes)  // nothing planned yet: who is here so far
    return render_joining_table(job_id_, expected_nodes_, nodes->joined_nodes()) + members;
  return render_status_table(job_id_, policy_, status_extras()) + members + hang_watch_.status_text();
}

std::string JobQueries::answer(const std::string& query) {
  if (auto tail = decode_tail_request(query)) return answer_tail(*tail);
  if (query == kTimelineJsonQuery) return answer_timeline();
  if (query == kStatusJsonQuery) return render_status_json(job_id_, policy_, status_extras());
  if (auto stacks = decode_stacks_request(query)) return hang_watch_.answer_stacks_query(*stacks);
  return "error: unknown query '" + query.substr(0, 40) + "'";
}

void JobQueries::on_rank_output(const rendezvous::Message& m) {
  if (auto output = messages::decode_rank_output(m)) tails_.on_output(*output);
}

// The same rule as for stacks: the lines of a multi-node job's ranks go only to someone who
// proved the job's token (a job without one answers status, not its ranks' output).
std::string JobQueries::answer_tail(const TailRequest& request) {
  if (policy_.nodes().size() > 1 && token_.empty())
    return encode_tail_reply({{}, "this multi-node job has no token, so its ranks' output is not relayed: start it "
                                  "with DDPLAUNCH_TOKEN or --token-file (ddplaunch-srun and --hosts make one)"});
  int world = 0;
  for (const auto& n : policy_.nodes()) world += n.facts.nproc;
  if (world == 0) return encode_tail_reply({{}, "no workers run yet: the job is still joining"});
  return tails_.answer(request, world, RankTailRelay::Clock::now());
}

std::string JobQueries::answer_timeline() const {
  std::string json = timeline_.json();
  if (json.size() > kMaxTimelineReplyBytes)
    return fmt::format("error: the job's timeline is {} KiB, more than one answer carries ({} KiB): the master "
                       "writes it whole at the job's end with --trace FILE or --log-dir DIR",
                       json.size() / 1024, kMaxTimelineReplyBytes / 1024);
  return json;
}

StatusExtras JobQueries::status_extras() const {
  return {reporting_nodes_, hang_watch_.tracker().suspect_ranks(), hang_watch_.tracker().learnt_interval_s()};
}

}  // namespace ddplaunch
