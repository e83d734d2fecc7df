// The keep-alive pace of a job: how often the master and each node send a heartbeat, and how
// long a silence means the other side is gone. At the configured interval while the job is
// small; stretched as it grows, so that at rest the master sends (and receives) at most
// `budget_per_s` heartbeats a second whatever the node count — at 16384 nodes the exchange
// had been ~65,000 frames a second on node 0, whose cores also run ranks. The timeout keeps
// its ratio to the interval. A lost launcher or host that closes or resets its connection is
// still seen at once by the socket; only a silent loss (a cut link, a frozen host) waits for
// the stretched timeout. docs/ARCHITECTURE.md "Keep-alive at scale". Internal to rendezvous.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ddplaunch/rendezvous/codec.h"

namespace ddplaunch::rendezvous::detail {

// One heartbeat in this many asks for an acknowledgement (the round trip the status table and
// the init deadline read); the others are answered by the other side's own heartbeats.
inline constexpr std::uint64_t kRttProbeEvery = 8;
// The longest pace a peer may announce: a heartbeat says when the next one comes.
inline constexpr std::chrono::milliseconds kLongestPace{10 * 60 * 1000};

struct KeepalivePace {
  std::chrono::milliseconds interval, timeout;
};

// The pace for `nodes` joined nodes: the configured one, stretched to nodes / budget_per_s
// seconds when that is longer (budget 0: never stretched), the timeout scaled alike.
KeepalivePace keepalive_pace(std::chrono::milliseconds interval, std::chrono::milliseconds timeout, std::size_t nodes,
                             std::size_t budget_per_s);

// A peer's own pace once the other side announced `announced` (its heartbeat interval): the
// configured one, or the announced one when that is longer, the timeout scaled alike.
KeepalivePace paced_by(std::chrono::milliseconds interval, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds announced);

// Whether a side that last sent a frame at `last_sent` owes its peer a heartbeat now: any frame
// tells the peer this side is alive, so a heartbeat only fills a silence of `quiet` (a node:
// its interval, its timer then runs from its last frame; the master, whose one timer serves
// every node: half an interval, so no node waits more than one and a half). At rest a node's
// periodic rank report is its heartbeat. A peer that was not yet told the pace in force is
// always owed one (a heartbeat carries the pace).
bool heartbeat_due(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point last_sent,
                   std::chrono::milliseconds quiet, bool pace_told = true);

// The fields of heartbeat `seq`: "seq", the sender's pace ("pace_ms") and, every
// kRttProbeEvery-th heartbeat, "echo" (please acknowledge).
void put_heartbeat(Frame& heartbeat, std::uint64_t seq, std::chrono::milliseconds pace);
// A heartbeat that only announces the pace (no sequence number, never asks for an answer):
// what the master sends a node as it joins a job paced slower than configured.
void put_pace_announcement(Frame& heartbeat, std::chrono::milliseconds pace);
// The pace a heartbeat announces, when it carries a valid one.
std::optional<std::chrono::milliseconds> announced_pace(const Frame& heartbeat);
// Whether a heartbeat asks to be acknowledged.
bool asks_echo(const Frame& heartbeat);

}  // namespace ddplaunch::rendezvous::detail
