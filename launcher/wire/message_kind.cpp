// The launcher messages' kinds and their names on the wire.
#include "wire/message_kind.h"

#include "ddplaunch/base/name_table.h"

namespace ddplaunch::messages {

namespace {
constexpr NameTable<Kind, 23> kKindNames{{{
    {Kind::WorkerFailed, "worker_failed"},
    {Kind::NodeFinished, "node_finished"},
    {Kind::NodeProblem, "node_problem"},
    {Kind::NodeReport, "node_report"},
    {Kind::RankStates, "rank_states"},
    {Kind::Restart, "restart"},
    {Kind::Stop, "stop"},
    {Kind::JobEnd, "job_end"},
    {Kind::Resume, "resume"},
    {Kind::ProbeResults, "probe_results"},
    {Kind::ProbeVerdict, "probe_verdict"},
    {Kind::Standby, "standby"},
    {Kind::CollectStacks, "collect_stacks"},
    {Kind::RankStacks, "rank_stacks"},
    {Kind::DebugStopped, "debug_stopped"},
    {Kind::DebugOutput, "debug_output"},
    {Kind::DebugResumed, "debug_resumed"},
    {Kind::DebugInput, "debug_input"},
    {Kind::DebugAttachGdb, "debug_attach_gdb"},
    {Kind::TimelineEvents, "timeline_events"},
    {Kind::OutputFilter, "output_filter"},
    {Kind::FollowRank, "follow_rank"},
    {Kind::RankOutput, "rank_output"},
}}};
}  // namespace

std::string_view kind_name(Kind kind) { return kKindNames.name(kind); }
std::optional<Kind> kind_of(const rendezvous::Message& m) { return kKindNames.parse(m.type); }

}  // namespace ddplaunch::messages
