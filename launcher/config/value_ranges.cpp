// The range table. Bounds are sane limits for people, not what the types hold: a timeout of
// a week is already far beyond any real wait; a heartbeat below 50 ms only burns a core.
#include "config/value_ranges.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

constexpr double kWeek = 7 * 24 * 3600;
constexpr double kDay = 24 * 3600;
constexpr double kHour = 3600;

constexpr ValueRange kRanges[] = {
    {"nodes", "--nnodes", 1, 65536, ""},
    {"nproc_per_node", "--nproc-per-node", 1, 1024, ""},
    {"join_timeout_s", "--join-timeout", 0.1, kWeek, "seconds"},
    {"connect_timeout_s", "--connect-timeout", 0.1, kHour, "seconds"},
    {"heartbeat_interval_s", "--heartbeat-interval", 0.05, 60, "seconds"},
    {"heartbeat_timeout_s", "--heartbeat-timeout", 0.1, kDay, "seconds"},
    {"grace_s", "--grace", 0, kHour, "seconds"},
    {"init_grace_s", "--init-grace", 0, kDay, "seconds"},
    {"setup_timeout_s", "", 0, kWeek, "seconds"},
    {"timeout.base_s", "", 0, kWeek, "seconds"},
    {"timeout.per_node_s", "", 0, kHour, "seconds"},
    {"timeout.dedicated_nic_s", "", 0, kHour, "seconds"},
    {"timeout.rtt_factor", "", 0, 1e6, ""},
    {"timeout.min_s", "", 0, kWeek, "seconds"},
    {"timeout.max_s", "", 0.1, kWeek, "seconds"},
    {"timeout.restart_factor", "", 1, 100, ""},
    {"restart.max_restarts", "--max-restarts", 0, 10000, ""},
    {"restart.init_restarts", "--init-restarts", 0, 1000, ""},
    {"restart.backoff_s", "--backoff", 0, kHour, "seconds"},
    {"restart.backoff_max_s", "", 0, kDay, "seconds"},
    {"restart.jitter", "", 0, 1, ""},
    {"membership.min_nodes", "--nnodes", 0, 65536, ""},
    {"membership.spares", "--spares", 0, 65536, ""},
    {"membership.last_call_s", "--last-call", 0, kDay, "seconds"},
    {"membership.below_min_wait_s", "", 0, kWeek, "seconds"},
    {"membership.exclude_after", "", 1, 1000, ""},
    {"membership.exclude_cooldown_s", "", 0, kWeek, "seconds"},
    {"membership.max_changes", "", 0, 100000, ""},
    {"hang.warmup_steps", "", 0, 1e6, "steps"},
    {"hang.suspect_factor", "", 1, 1000, ""},
    {"hang.suspect_floor_s", "--hang-suspect-floor", 0.5, kWeek, "seconds"},
    {"hang.hang_factor", "", 1, 1000, ""},
    {"hang.hang_minimum_s", "--hang-minimum", 1, kWeek, "seconds"},
    {"hang.section_suspect_floor_s", "", 0.5, kWeek, "seconds"},
    {"hang.section_hang_minimum_s", "", 1, kWeek, "seconds"},
};

// A number in C's syntax (inf and nan included) or YAML's (.inf, -.inf, .nan); nullopt for
// words like "auto".
std::optional<double> number_of(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == ".inf" || s == "+.inf") return HUGE_VAL;
  if (s == "-.inf") return -HUGE_VAL;
  if (s == ".nan") return std::nan("");
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;  // ±HUGE_VAL on overflow (1e999): out of every range of the table
}

}  // namespace

const ValueRange* value_range(std::string_view key) {
  for (const ValueRange& r : kRanges)
    if (r.key == key) return &r;
  return nullptr;
}

std::optional<std::string> out_of_range(std::string_view key, std::string_view shown_as, std::string_view text) {
  const ValueRange* r = value_range(key);
  auto value = number_of(text);
  if (!r || !value) return std::nullopt;
  if (*value >= r->min && *value <= r->max) return std::nullopt;  // false for nan
  // Name the other spelling, so the user finds the key wherever they set it.
  const bool shown_as_flag = !r->flag.empty() && shown_as.find(r->flag) != std::string_view::npos;
  const std::string other = shown_as_flag ? fmt::format("YAML: {}", r->key)
                            : r->flag.empty() ? fmt::format("set with --set {}=VALUE or in YAML", r->key)
                                              : fmt::format("flag: {}", r->flag);
  return fmt::format("{} {} is out of range: allowed {} to {}{}{} ({})", shown_as, text, r->min, r->max,
                     r->unit.empty() ? "" : " ", r->unit, other);
}

}  // namespace ddplaunch
