// PlannedNodes: see planned_nodes.h.
#include "policy/planned_nodes.h"

#include <algorithm>

#include "ddplaunch/base/name_table.h"

namespace ddplaunch {

namespace {
constexpr NameTable<NodeStanding, 3> kNodeStandingNames{{{
    {NodeStanding::Active, "active"},
    {NodeStanding::Finished, "finished"},
    {NodeStanding::Lost, "lost"},
}}};
}  // namespace

std::string_view node_standing_name(NodeStanding state) { return kNodeStandingNames.name(state); }
std::optional<NodeStanding> node_standing_from_name(std::string_view name) { return kNodeStandingNames.parse(name); }

void PlannedNodes::plan(const std::vector<rendezvous::NodeRecord>& nodes) {
  nodes_ = nodes;
  standings_.clear();
  for (const auto& n : nodes) standings_[n.node_rank] = NodeStanding::Active;
  first_failed_exit_ = 0;
}

void PlannedNodes::clear() {
  nodes_.clear();
  standings_.clear();
}

bool PlannedNodes::finish(int node, NodeStanding standing, int exit_code) {
  auto it = standings_.find(node);
  if (it == standings_.end() || it->second != NodeStanding::Active) return false;
  it->second = standing;
  if (exit_code != 0 && first_failed_exit_ == 0) first_failed_exit_ = exit_code;
  return true;
}

void PlannedNodes::reactivate_finished() {
  for (auto& [node, standing] : standings_)
    if (standing == NodeStanding::Finished) standing = NodeStanding::Active;
}

int PlannedNodes::active_count() const {
  return static_cast<int>(std::count_if(standings_.begin(), standings_.end(),
                                        [](const auto& n) { return n.second == NodeStanding::Active; }));
}

const rendezvous::NodeRecord* PlannedNodes::find(int node) const {
  for (const auto& n : nodes_)
    if (n.node_rank == node) return &n;
  return nullptr;
}

std::string PlannedNodes::host_of(int node) const {
  const rendezvous::NodeRecord* record = find(node);
  return record ? record->facts.hostname : "?";
}

FailureReport PlannedNodes::failure_of_rank(int rank, const TrackedRank& state, FailurePhase phase, FailureKind kind,
                                            std::string detail) const {
  FailureReport r;
  r.failure.node_rank = state.node;
  r.failure.global_rank = rank;
  r.failure.local_rank = rank;
  for (const auto& n : nodes_) {
    if (n.node_rank == state.node) r.host = n.facts.hostname;
    if (n.node_rank < state.node) r.failure.local_rank -= n.facts.nproc;
  }
  r.failure.pid = state.last.pid;
  r.failure.phase = phase;
  r.failure.kind = kind;
  r.failure.detail = std::move(detail);
  return r;
}

std::vector<int> PlannedNodes::node_of_each_rank() const {
  std::vector<int> node_of_rank;
  for (const auto& n : nodes_)
    for (int i = 0; i < n.facts.nproc; ++i) node_of_rank.push_back(n.node_rank);
  return node_of_rank;
}

std::vector<int> PlannedNodes::member_ids() const {
  std::vector<int> ids;
  for (const auto& n : nodes_)
    if (n.member_id >= 0) ids.push_back(n.member_id);
  return ids;
}

}  // namespace ddplaunch
