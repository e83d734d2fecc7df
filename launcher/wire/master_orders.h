// What a node hears from the master, as one value: each master → node message kind decodes to
// its own payload in a variant, so the node handles them with one std::visit — a kind added
// here and not handled there does not compile, and a kind added to messages::Kind and left out
// here is a compile error in master_orders.cpp (-Werror=switch).
#pragma once

#include <optional>
#include <variant>

#include "wire/launcher_messages.h"

namespace ddplaunch::messages {

using MasterOrder = std::variant<Restart, Stop, JobEnd, Resume, ProbeVerdict, Standby, OutputFilter, FollowRank,
                                 CollectStacks, DebugInput, DebugAttachGdb>;

// nullopt: a node → master kind, an unknown type, or a malformed payload (ignored, as before).
std::optional<MasterOrder> decode_master_order(const rendezvous::Message& message);

}  // namespace ddplaunch::messages
