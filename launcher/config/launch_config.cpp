// Validation and printing of LaunchConfig: the single place where values are checked.
#include "config/launch_config.h"

#include "output/stream_routing.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

std::optional<int> parse_port_text(std::string_view s) {
  int port = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  if (ec != std::errc{} || ptr != s.data() + s.size() || port < 1 || port > 65535) return std::nullopt;
  return port;
}

std::optional<HostPort> parse_host_port(const std::string& text) {
  HostPort out;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {  // [v6]:port
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    out.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) return std::nullopt;
    out.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto port = parse_port_text(port_text);
  if (out.host.empty() || !port) return std::nullopt;
  out.port = *port;
  return out;
}

std::vector<std::string> validate(const LaunchConfig& c) {
  std::vector<std::string> errors;
  auto need = [&](bool ok, std::string message) {
    if (!ok) errors.push_back(std::move(message));
  };
  need(c.nodes >= 1, fmt::format("nodes must be at least 1 (got {})", c.nodes));
  need(c.nproc_per_node.count.value_or(1) >= 1,
       fmt::format("nproc_per_node must be {} (got {})", preflight::nproc_request_choices(),
                   preflight::nproc_request_text(c.nproc_per_node)));
  const int rank_limit = c.nodes + c.membership.spares;  // ranks >= nodes start as spares
  need(c.node_rank >= -1 && c.node_rank < rank_limit,
       fmt::format("node_rank {} is outside 0..{} (nodes = {}{})", c.node_rank, rank_limit - 1, c.nodes,
                   c.membership.spares > 0 ? fmt::format(", spares = {}", c.membership.spares) : ""));
  const MembershipConfig& m = c.membership;
  need(m.min_nodes >= 0 && m.min_nodes <= c.nodes,
       fmt::format("membership.min_nodes {} must be within 1..nodes ({}); --nodes MIN:MAX sets both", m.min_nodes, c.nodes));
  need(m.spares >= 0, fmt::format("membership.spares must be >= 0 (got {})", m.spares));
  need(!(etcd_enabled(c) && c.standalone),
       "--standalone runs one node without a rendezvous; drop it with --rdzv-backend etcd");
  need(c.etcd.password_file.empty() || !c.etcd.username.empty(),
       "etcd.password_file (--rdzv-conf password_file=) is given without a user: add username=NAME");
  need(!(membership_enabled(c) && !etcd_enabled(c) && c.standalone),
       "--spares and --nodes MIN:MAX need several nodes; drop them with --standalone");
  need(m.exclude_after >= 1, fmt::format("membership.exclude_after must be >= 1 (got {})", m.exclude_after));
  if (c.standalone) {
    need(c.nodes == 1, fmt::format("--standalone runs one node, but nodes = {}; drop --standalone or use --nodes 1", c.nodes));
  } else if (etcd_enabled(c)) {
    // The elected launcher hosts the rendezvous (etcd's list is checked by etcd/endpoints). The
    // job's state lives in etcd under its id: one shared by two runs would resume the other's.
    need(!c.job_id.empty(),
         "--rdzv-backend etcd needs --rdzv-id ID: the same on every launcher of this run and new for each run (the "
         "job's state lives in etcd under /ddplaunch/ID/; e.g. --rdzv-id \"train-$(date +%Y%m%d-%H%M%S)\" computed "
         "once and given to every launcher). Under Slurm the job and step id is used by default");
  } else if (c.nodes > 1 || !c.master.empty()) {
    need(!c.master.empty(),
         fmt::format("a {}-node job needs the rendezvous endpoint: pass --master HOST:PORT (HOST = node 0's address)", c.nodes));
    need(c.master.empty() || parse_host_port(c.master).has_value(),
         fmt::format("master '{}' is not HOST:PORT (e.g. node01:29400 or [fe80::1]:29400)", c.master));
  }
  if (auto endpoint = parse_host_port(c.master); endpoint && c.worker_port.fixed)
    need(*c.worker_port.fixed != endpoint->port,
         fmt::format("worker_port {} is the rendezvous port of --master {}: the workers' c10d store needs its own "
                     "port; use --worker-port auto",
                     *c.worker_port.fixed, c.master));
  need(c.job_id.size() <= rendezvous::kMaxJobIdChars,
       fmt::format("the job id (--rdzv-id) is {} characters long; at most {} fit the rendezvous and etcd keys",
                   c.job_id.size(), rendezvous::kMaxJobIdChars));
  need(std::all_of(c.job_id.begin(), c.job_id.end(), [](char ch) { return ch > ' ' && ch < 0x7f; }),
       "the job id (--rdzv-id) may hold printable ASCII characters only, no spaces");
  need(c.join_timeout_s > 0, fmt::format("join_timeout_s must be > 0 (got {})", c.join_timeout_s));
  need(c.connect_timeout_s > 0, fmt::format("connect_timeout_s must be > 0 (got {})", c.connect_timeout_s));
  need(c.heartbeat_interval_s > 0, fmt::format("heartbeat_interval_s must be > 0 (got {})", c.heartbeat_interval_s));
  need(c.heartbeat_timeout_s > c.heartbeat_interval_s,
       fmt::format("heartbeat_timeout_s ({}) must exceed heartbeat_interval_s ({})", c.heartbeat_timeout_s,
                   c.heartbeat_interval_s));
  need(c.grace_s >= 0, fmt::format("grace_s must be >= 0 (got {})", c.grace_s));
  need(c.init_grace_s >= 0, fmt::format("init_grace_s must be >= 0 (got {})", c.init_grace_s));
  need(c.setup_timeout_s >= 0, fmt::format("setup_timeout_s must be >= 0 (got {}; 0 = unbounded)", c.setup_timeout_s));
  if (auto timeout = validate(c.init_deadline); !timeout) errors.push_back("timeout: " + timeout.message);
  const RestartSettings& r = c.restart;
  need(r.max_restarts >= 0, fmt::format("restart.max_restarts must be >= 0 (got {})", r.max_restarts));
  need(r.init_restarts >= 0, fmt::format("restart.init_restarts must be >= 0 (got {})", r.init_restarts));
  need(r.backoff_s >= 0, fmt::format("restart.backoff_s (--backoff) must be >= 0 (got {})", r.backoff_s));
  need(r.backoff_max_s >= r.backoff_s,
       fmt::format("restart.backoff_s (--backoff) {} s exceeds restart.backoff_max_s {} s, the longest wait between "
                   "restarts: lower --backoff or raise restart.backoff_max_s in the YAML config",
                   r.backoff_s, r.backoff_max_s));
  need(r.jitter >= 0 && r.jitter <= 1, fmt::format("restart.jitter must be within 0..1 (got {})", r.jitter));
  need(c.hang.hang_minimum_s >= c.hang.suspect_floor_s,
       fmt::format("hang.hang_minimum_s ({}) must be at least hang.suspect_floor_s ({}): a hang is reported as "
                   "suspect first",
                   c.hang.hang_minimum_s, c.hang.suspect_floor_s));
  for (int r : c.pause_ranks) need(r >= 0, fmt::format("pause rank {} is negative", r));
  for (int r : c.local_ranks_filter) need(r >= 0, fmt::format("local_ranks_filter: local rank {} is negative", r));
  for (int r : c.ranks_filter) need(r >= 0, fmt::format("ranks_filter: rank {} is negative", r));
  need(!c.program.empty() || c.dry_run,
       "no program to run: put it after '--', e.g. ddplaunch --nproc-per-node 2 -- python3 train.py");
  return errors;
}

// etcd: the elected coordinator assigns every slot (no launcher is node 0 by its command line).
bool membership_enabled(const LaunchConfig& c) {
  return c.membership.spares > 0 || min_nodes(c) < c.nodes || etcd_enabled(c);
}

int min_nodes(const LaunchConfig& c) { return c.membership.min_nodes > 0 ? c.membership.min_nodes : c.nodes; }

}  // namespace ddplaunch
