// The election revision an order from the coordinator carries: the etcd
// coordinator stamps every message with the revision it was elected at
// (rendezvous::ServerOptions::order_revision), and a node obeys no order of an older one.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include "ddplaunch/rendezvous/server.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

// The frame's stamp; without one, `connection_revision` (the revision etcd named when this
// connection was made). A stamp that is not a revision is 0: older than any coordinator.
inline std::int64_t order_revision(const rendezvous::Message& m, std::int64_t connection_revision) {
  auto stamp = m.fields.find(rendezvous::kOrderRevisionField);
  if (stamp == m.fields.end()) return connection_revision;
  const std::string& text = stamp->second;
  std::int64_t revision = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), revision);
  if (error != std::errc() || end != text.data() + text.size() || revision < 0) return 0;
  return revision;
}

}  // namespace ddplaunch
