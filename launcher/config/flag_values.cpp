// What each flag value means here: the checks by kind and every translation of torchrun's
// words, ranges and refused capabilities into settings, notes and errors.
#include "config/flag_values.h"

#include "ddplaunch/base/index_list.h"

#include <charconv>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "config/command_line.h"
#include "config/value_ranges.h"
#include "ddplaunch/preflight/nproc_request.h"
#include "output/stream_routing.h"
#include "placement/cpu_placement.h"

namespace ddplaunch {

void FlagContext::set(std::string key, std::string value) { cl.settings.emplace_back(std::move(key), std::move(value)); }
void FlagContext::note(std::string message) { cl.notes.push_back(std::move(message)); }
void FlagContext::error(std::string message) { cl.errors.push_back(std::move(message)); }

namespace {
std::optional<long> parse_long(std::string_view text) {
  long n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return n;
}

// A number that is not negative; inf, nan and overflow pass here so that the key's range
// check can name the allowed range.
std::optional<double> parse_seconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || v < 0) return std::nullopt;
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

bool switch_on(const std::string& v) { return v != "false" && v != "0" && v != "no"; }

// False, with the allowed range as the error, when `value` is outside the range of `key`.
// The message names the value as given: "--join-timeout", "PET_NNODES", "--rdzv-conf timeout".
bool within_range(const std::string& key, const std::string& value, FlagContext& c, const std::string& item = "") {
  const bool from_pet = c.source.rfind("PET_", 0) == 0;
  const std::string source = from_pet ? c.source.substr(0, c.source.find('=')) : c.source;
  auto error = out_of_range(key, item.empty() ? source : source + " " + item, value);
  if (error) c.error(std::move(*error));
  return !error;
}

}  // namespace

// --nnodes N | MIN:MAX. Equal bounds are one size; a range makes the job elastic (torchrun's
// meaning: start with MAX, or MIN after the last call; shrink and grow between them).
void apply_nnodes(const std::string& v, FlagContext& c) {
  auto bounds = split(v, ':');
  auto bad = [&] {
    c.error(fmt::format("{} '{}' is not a node count: use N (e.g. 2), or torchrun's MIN:MAX (e.g. 2:4)", c.source, v));
  };
  if (bounds.size() > 2) return bad();
  auto min = parse_long(bounds.front()), max = parse_long(bounds.back());
  if (!min || !max || *min < 1 || *max < 1) return bad();
  if (*min > *max) return c.error(fmt::format("{} '{}': the minimum exceeds the maximum", c.source, v));
  if (!within_range("nodes", std::to_string(*max), c)) return;
  c.set("nodes", std::to_string(*max));
  c.set("membership.min_nodes", std::to_string(*min));
}

// N, or torchrun's auto (GPUs, else CPUs), gpu, cpu, or gpu-or-1: counted on this node at start.
void apply_nproc(const std::string& v, FlagContext& c) {
  const auto request = preflight::parse_nproc_request(v);
  if (!request)
    return c.error(fmt::format("{} '{}' is not valid: nproc_per_node is {}", c.source, v, preflight::nproc_request_choices()));
  if (!request->count || within_range("nproc_per_node", v, c)) c.set("nproc_per_node", v);
}

// HOST[:PORT] of the rendezvous; torchrun's default port 29400 when none is given.
void apply_endpoint(const std::string& v, FlagContext& c) {
  if (v.empty()) return c.error(fmt::format("{} needs HOST[:PORT], e.g. node01:29400", c.source));
  const bool bracketed_v6_without_port = v.front() == '[' && v.back() == ']';
  const bool no_port = v.front() != '[' && v.find(':') == std::string::npos;
  c.endpoint_given = v;  // with --rdzv-backend etcd it is the etcd member list instead (combine())
  c.set("master", bracketed_v6_without_port || no_port ? v + ":29400" : v);
}

void apply_master_addr(const std::string& v, FlagContext& c) {
  if (v.empty()) return c.error(fmt::format("{} needs node 0's address", c.source));
  c.master_addr = v;
}

void apply_master_port(const std::string& v, FlagContext& c) {
  auto port = parse_long(v);
  if (!port || *port < 1 || *port > 65535) return c.error(fmt::format("{} '{}' is not a port (1..65535)", c.source, v));
  c.master_port = v;
}

void apply_rdzv_backend(const std::string& v, FlagContext& c) {
  if (v == "static" || v == "c10d") return;  // both mean: node 0's ddplaunch hosts the rendezvous
  // torchrun's etcd-v2 spoke etcd's v2 API (gone in etcd 3.6); ddplaunch speaks v3 for both names.
  if (v == "etcd" || v == "etcd-v2") {
    c.rdzv_backend = "etcd";
    c.rdzv_backend_source = c.source.find('=') == std::string::npos ? c.source + " " + v : c.source;
    return;
  }
  c.error(fmt::format("{} '{}' is not a rendezvous backend: use c10d, static or etcd", c.source, v));
}

// torchrun's --rdzv-conf keys that have a ddplaunch meaning; the others are refused.
void apply_rdzv_conf(const std::string& v, FlagContext& c) {
  for (const std::string& item : split(v, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || key.empty() || value.empty()) {
      c.error(fmt::format("{}: '{}' is not KEY=VALUE (e.g. join_timeout=900)", c.source, item));
      continue;
    }
    auto seconds = [&](const char* setting) {
      if (!parse_seconds(value)) return c.error(fmt::format("{}: {}={} is not a number of seconds", c.source, key, value));
      if (within_range(setting, value, c, key)) c.set(setting, value);
    };
    if (key == "join_timeout" || key == "timeout") seconds("join_timeout_s");
    else if (key == "read_timeout") seconds("connect_timeout_s");
    else if (key == "keep_alive_interval") {
      if (auto s = parse_seconds(value); s && *s > 0) c.keep_alive_interval_s = *s;
      else c.error(fmt::format("{}: keep_alive_interval={} is not a number of seconds > 0", c.source, value));
    } else if (key == "keep_alive_max_attempt") {
      if (auto n = parse_long(value); n && *n >= 1) c.keep_alive_attempts = static_cast<int>(*n);
      else c.error(fmt::format("{}: keep_alive_max_attempt={} is not a count >= 1", c.source, value));
    } else if (key == "lease_ttl") {  // etcd: how soon a lost coordinator's lease expires
      seconds("etcd.lease_ttl_s");
    } else if (key == "coordinator_port") {
      auto port = parse_long(value);
      if (!port || *port < 0 || *port > 65535)
        c.error(fmt::format("{}: coordinator_port={} is not a port (0..65535; 0 = any free port)", c.source, value));
      else
        c.set("etcd.coordinator_port", value);
    } else if (key == "protocol") {  // etcd: TLS (torchrun's etcd rendezvous names the keys alike)
      if (!kEtcdProtocolNames.parse(value))
        c.error(fmt::format("{}: protocol={} is not {}", c.source, value, kEtcdProtocolNames.listed()));
      else
        c.set("etcd.protocol", value);
    } else if (key == "cacert" || key == "cert" || key == "key" || key == "username" || key == "password_file") {
      c.set("etcd." + key, value);
    } else if (key == "password") {
      c.error(fmt::format("{}: password= is refused: a command line is visible to every user of this host (ps, "
                          "/proc/PID/cmdline); put the etcd password in a file only you can read and give "
                          "password_file=PATH, or set DDPLAUNCH_ETCD_PASSWORD", c.source));
    } else if (key == "last_call_timeout") {  // elastic MIN:MAX: the wait for more nodes once MIN joined
      seconds("membership.last_call_s");
    } else if (key == "close_timeout" || key == "is_host" || key == "store_type" ||
               key == "use_libuv") {
      c.note(fmt::format("{}: {} has no effect in ddplaunch (the rendezvous closes when all --nnodes nodes joined; "
                         "node 0's ddplaunch hosts it)", c.source, key));
    } else {
      c.error(fmt::format("{}: unknown key '{}'; known: join_timeout, timeout, read_timeout, keep_alive_interval, "
                          "keep_alive_max_attempt, last_call_timeout, close_timeout, is_host; with etcd: lease_ttl, "
                          "coordinator_port, protocol, cacert, cert, key, username, password_file", c.source, key));
    }
  }
}

void apply_monitor_interval(const std::string& v, FlagContext& c) {
  if (!parse_seconds(v)) return c.error(fmt::format("{} '{}' is not a number of seconds", c.source, v));
  c.note(fmt::format("{} is not needed: ddplaunch reacts to worker events as they happen instead of polling", c.source));
}

void apply_start_method(const std::string& v, FlagContext& c) {
  if (v != "spawn" && v != "fork" && v != "forkserver")
    c.error(fmt::format("{} '{}' is not spawn, fork or forkserver", c.source, v));
}

// -r/--redirects, -t/--tee: torchrun's 0..3 or LOCAL_RANK:0..3 lists (output/stream_routing.h).
namespace {
void apply_stream_spec(const std::string& key, const std::string& v, FlagContext& c) {
  if (auto problem = stream_spec_problem(v); !problem.empty()) return c.error(fmt::format("{} {}", c.source, problem));
  c.set(key, v);
}
}  // namespace

void apply_redirects(const std::string& v, FlagContext& c) { apply_stream_spec("redirects", v, c); }
void apply_tee(const std::string& v, FlagContext& c) { apply_stream_spec("tee", v, c); }

void apply_local_ranks_filter(const std::string& v, FlagContext& c) {
  for (const auto& item : split(v, ',')) {
    auto n = parse_long(item);
    if (!n || *n < 0)
      return c.error(fmt::format("{} '{}' is not a comma list of local ranks (e.g. 0,3)", c.source, v));
  }
  c.set("local_ranks_filter", v);
}

void apply_no_collapse(const std::string& v, FlagContext& c) {
  if (switch_on(v)) c.set("collapse_output", "off");
}

// Global ranks in the kernel's list form ("5,8-11"), expanded for the key's list.
void apply_ranks_filter(const std::string& v, FlagContext& c) {
  constexpr int kMostRank = 1 << 20;
  std::string list;  // "5, 8-11" and YAML's "[5, 8]" too
  for (char ch : v)
    if (ch != ' ' && ch != '[' && ch != ']') list += ch;
  auto ranks = parse_index_list(list, kMostRank);
  if (!ranks || ranks->empty())
    return c.error(fmt::format("{} '{}' is not a list of global ranks (e.g. 5,8-11)", c.source, v));
  std::string expanded;
  for (int r : *ranks) expanded += (expanded.empty() ? "" : ",") + std::to_string(r);
  c.set("ranks_filter", expanded);
}

void apply_local_addr(const std::string& v, FlagContext& c) {
  if (v.empty()) return c.error(fmt::format("{} needs an address", c.source));
  c.note(fmt::format("{} {} is not needed: node 0 records the address each node's rendezvous connection comes from",
                     c.source, v));
}

void apply_signals(const std::string& v, FlagContext& c) {
  // SIGUSR1/SIGUSR2 are always forwarded to the workers (Slurm's checkpoint-before-preemption).
  static const std::set<std::string> handled{"SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"};
  static const std::set<std::string> known{"SIGALRM", "SIGXCPU", "SIGCONT", "SIGTSTP"};
  for (const auto& name : split(v, ',')) {
    if (handled.count(name)) continue;
    if (known.count(name))
      c.error(fmt::format("{}: forwarding {} to the workers is not supported; ddplaunch stops the workers on "
                          "SIGTERM, SIGINT and SIGHUP (SIGTERM, --grace seconds, then SIGKILL) and forwards SIGUSR1 "
                          "and SIGUSR2", c.source, name));
    else
      c.error(fmt::format("{}: '{}' is not a signal name like SIGTERM", c.source, name));
  }
}

void apply_numa_binding(const std::string& v, FlagContext& c) {
  if (!placement::binding_mode_from_name(v))
    return c.error(fmt::format("{} '{}' is not node, socket, exclusive or core-complex", c.source, v));
  c.set("numa_binding", v == "core_complex" ? "core-complex" : v == "none" ? "" : v);
}

void apply_set(const std::string& v, FlagContext& c) {
  auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0)
    return c.error(fmt::format("--set expects KEY=VALUE (got '{}'), e.g. --set timeout.base_s=60", v));
  c.set(v.substr(0, eq), v.substr(eq + 1));
}

void apply_config(const std::string& v, FlagContext& c) { c.cl.config_path = v; }
void apply_dry_run(const std::string& v, FlagContext& c) { c.cl.dry_run = switch_on(v); }
void apply_no_peer_probe(const std::string& v, FlagContext& c) {
  if (switch_on(v)) c.set("peer_probe", "false");
}
void apply_help(const std::string& v, FlagContext& c) { c.cl.help = switch_on(v); }
void apply_version(const std::string& v, FlagContext& c) { c.cl.version = switch_on(v); }
void apply_print_default_config(const std::string& v, FlagContext& c) { c.cl.print_default_config = switch_on(v); }
void apply_man(const std::string& v, FlagContext& c) { c.cl.man = switch_on(v); }
void apply_python(const std::string& v, FlagContext& c) { c.cl.python = v; }
void apply_gdb_rank(const std::string& v, FlagContext& c) { c.cl.gdb_rank = std::stoi(v); }  // a Count: checked
void apply_tail_rank(const std::string& v, FlagContext& c) { c.cl.tail_rank = std::stoi(v); }  // a Count: checked
void apply_status_watch(const std::string& v, FlagContext& c) { c.cl.status_watch = switch_on(v); }
void apply_status_json(const std::string& v, FlagContext& c) { c.cl.status_json = switch_on(v); }
void apply_module(const std::string& v, FlagContext& c) {
  if (!switch_on(v)) return;
  if (c.cl.program_mode == ProgramMode::NoPython)
    return c.error("-m/--module and --no-python cannot be combined (as in torchrun): -m runs `python -m MODULE`");
  if (c.cl.program_mode != ProgramMode::RunPath) c.cl.program_mode = ProgramMode::Module;  // --run-path wins
}
void apply_no_python(const std::string& v, FlagContext& c) {
  if (!switch_on(v)) return;
  if (c.cl.program_mode == ProgramMode::Module)
    return c.error("-m/--module and --no-python cannot be combined (as in torchrun): -m runs `python -m MODULE`");
  if (c.cl.program_mode != ProgramMode::RunPath) c.cl.program_mode = ProgramMode::NoPython;  // --run-path wins
}
void apply_run_path(const std::string& v, FlagContext& c) {
  if (switch_on(v)) c.cl.program_mode = ProgramMode::RunPath;
}

using K = ValueKind;

void apply_flag_value(const OptionSpec& flag, const std::string& value, FlagContext& c) {
  switch (flag.kind) {
    case K::Switch:
      if (value != "true" && value != "false" && value != "1" && value != "0" && value != "yes" && value != "no")
        return c.error(fmt::format("{} takes no value, or true/false (got '{}')", c.source, value));
      break;
    case K::Text:
      if (value.empty()) return c.error(fmt::format("{} needs a value (see ddplaunch --help)", c.source));
      break;
    case K::Count:
      if (auto n = parse_long(value); !n || *n < 0)
        return c.error(fmt::format("{} expects a whole number >= 0 (got '{}')", c.source, value));
      break;
    case K::Seconds:
      if (!parse_seconds(value))
        return c.error(fmt::format("{} expects a number of seconds >= 0 (got '{}')", c.source, value));
      break;
    case K::Custom:
      break;
  }
  if (flag.apply) return flag.apply(value, c);  // it checks the ranges of what it sets
  if (!within_range(std::string(flag.key), value, c)) return;
  c.set(std::string(flag.key), flag.kind == K::Switch ? (switch_on(value) ? "true" : "false") : value);
}

void apply_hosts(const std::string& v, FlagContext& c) { c.cl.fanout.hosts = v; }
void apply_hostfile(const std::string& v, FlagContext& c) { c.cl.fanout.hostfile = v; }
void apply_include(const std::string& v, FlagContext& c) { c.cl.fanout.include = v; }
void apply_exclude(const std::string& v, FlagContext& c) { c.cl.fanout.exclude = v; }
void apply_export(const std::string& v, FlagContext& c) { c.cl.fanout.exported.push_back(v); }
void apply_env_file(const std::string& v, FlagContext& c) { c.cl.fanout.env_file = v; }
void apply_token_stdin(const std::string& v, FlagContext& c) { c.cl.token_stdin = switch_on(v); }
void apply_env_stdin(const std::string& v, FlagContext& c) { c.cl.env_stdin = switch_on(v); }
void apply_stop_on_stdin_eof(const std::string& v, FlagContext& c) { c.cl.stop_on_stdin_eof = switch_on(v); }

}  // namespace ddplaunch
