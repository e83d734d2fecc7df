// The master's orders to a node as one variant: see master_orders.h.
#include "wire/master_orders.h"

namespace ddplaunch::messages {

namespace {
template <typename Payload>
std::optional<MasterOrder> order(std::optional<Payload> payload) {
  if (!payload) return std::nullopt;
  return MasterOrder(std::move(*payload));
}
}  // namespace

std::optional<MasterOrder> decode_master_order(const rendezvous::Message& m) {
  const std::optional<Kind> kind = kind_of(m);
  if (!kind) return std::nullopt;
  switch (*kind) {
    case Kind::Restart: return order(decode<Restart>(m));
    case Kind::Stop: return order(decode<Stop>(m));
    case Kind::JobEnd: return order(decode<JobEnd>(m));
    case Kind::Resume: return order(decode<Resume>(m));
    case Kind::ProbeVerdict: return order(decode<ProbeVerdict>(m));
    case Kind::Standby: return order(decode<Standby>(m));
    case Kind::OutputFilter: return order(decode<OutputFilter>(m));
    case Kind::FollowRank: return order(decode<FollowRank>(m));
    case Kind::CollectStacks: return order(decode<CollectStacks>(m));
    case Kind::DebugInput: return order(decode<DebugInput>(m));
    case Kind::DebugAttachGdb: return order(decode<DebugAttachGdb>(m));
    // What nodes send the master: never an order.
    case Kind::WorkerFailed:
    case Kind::NodeFinished:
    case Kind::NodeProblem:
    case Kind::NodeReport:
    case Kind::RankStates:
    case Kind::ProbeResults:
    case Kind::TimelineEvents:
    case Kind::RankOutput:
    case Kind::RankStacks:
    case Kind::DebugStopped:
    case Kind::DebugOutput:
    case Kind::DebugResumed:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ddplaunch::messages
