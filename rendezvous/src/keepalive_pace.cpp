// The keep-alive pace; see keepalive_pace.h.
#include "keepalive_pace.h"

#include <algorithm>

#include "wire.h"

namespace ddplaunch::rendezvous::detail {

namespace {
std::chrono::milliseconds scaled(std::chrono::milliseconds timeout, std::chrono::milliseconds interval,
                                 std::chrono::milliseconds stretched) {
  if (stretched <= interval || interval.count() <= 0) return timeout;
  return std::chrono::milliseconds(timeout.count() * stretched.count() / interval.count());
}
}  // namespace

KeepalivePace keepalive_pace(std::chrono::milliseconds interval, std::chrono::milliseconds timeout, std::size_t nodes,
                             std::size_t budget_per_s) {
  std::chrono::milliseconds stretched = interval;
  if (budget_per_s > 0)
    stretched = std::max(interval, std::chrono::milliseconds(static_cast<long long>(nodes * 1000 / budget_per_s)));
  stretched = std::min(stretched, std::max(interval, kLongestPace));  // never below the configured interval
  return {stretched, scaled(timeout, interval, stretched)};
}

KeepalivePace paced_by(std::chrono::milliseconds interval, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds announced) {
  const std::chrono::milliseconds stretched = std::max(interval, std::min(announced, kLongestPace));
  return {stretched, scaled(timeout, interval, stretched)};
}

bool heartbeat_due(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point last_sent,
                   std::chrono::milliseconds quiet, bool pace_told) {
  return !pace_told || now - last_sent >= quiet;
}

void put_heartbeat(Frame& heartbeat, std::uint64_t seq, std::chrono::milliseconds pace) {
  heartbeat.fields["seq"] = std::to_string(seq);
  heartbeat.fields["pace_ms"] = std::to_string(pace.count());
  if (seq % kRttProbeEvery == 1) heartbeat.fields["echo"] = "1";
}

void put_pace_announcement(Frame& heartbeat, std::chrono::milliseconds pace) {
  heartbeat.fields["pace_ms"] = std::to_string(pace.count());
}

std::optional<std::chrono::milliseconds> announced_pace(const Frame& heartbeat) {
  long long ms = 0;
  const std::string* text = find_field(heartbeat.fields, "pace_ms");
  if (!text || !parse_int(*text, 1, kLongestPace.count(), ms)) return std::nullopt;
  return std::chrono::milliseconds(ms);
}

bool asks_echo(const Frame& heartbeat) { return find_field(heartbeat.fields, "echo") != nullptr; }

}  // namespace ddplaunch::rendezvous::detail
