// Protocol vocabulary: facts, assignments and lists to and from frame fields, strictly checked.
#include "wire.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "ddplaunch/rendezvous/printable.h"
#include "ddplaunch/rendezvous/token_proof.h"
#include "frame_routes.h"

namespace ddplaunch::rendezvous::detail {

namespace {
// Each kind's name is written once (wire.h); the enum is its typed form.
constexpr std::array<std::pair<FrameKind, std::string_view>, kFrameKindCount> kFrameKindNames{{
    {FrameKind::Hello, kHello},
    {FrameKind::Welcome, kWelcome},
    {FrameKind::Join, kJoin},
    {FrameKind::Status, kStatus},
    {FrameKind::StatusReply, kStatusReply},
    {FrameKind::Assign, kAssign},
    {FrameKind::Refuse, kRefuse},
    {FrameKind::Abort, kAbort},
    {FrameKind::Progress, kProgress},
    {FrameKind::Rejoin, kRejoin},
    {FrameKind::Heartbeat, kHeartbeat},
    {FrameKind::HeartbeatAck, kHeartbeatAck},
    {FrameKind::Msg, kMsg},
}};
// Host names (letters, digits, '-', '.', '_') and IPv4/IPv6 literals (hex digits, ':', '.', '%'
// for a zone), at most 255 characters.
bool is_host_or_ip_literal(const std::string& text) {
  if (text.empty() || text.size() > 255) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == ':' || c == '%';
  });
}

}  // namespace

std::optional<FrameKind> frame_kind(std::string_view name) {
  for (const auto& [kind, text] : kFrameKindNames)
    if (text == name) return kind;
  return std::nullopt;
}

std::string_view frame_kind_name(FrameKind kind) {
  for (const auto& [k, text] : kFrameKindNames)
    if (k == kind) return text;
  return "?";
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += '\n';
    out += items[i];
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t pos = 0;
  for (;;) {
    std::size_t nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string format_double(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : "0";
}

bool parse_int(const std::string& text, long long min, long long max, long long& out) {
  long long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < min || v > max)
    return false;
  out = v;
  return true;
}

bool parse_double(const std::string& text, double& out) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size()) return false;
  out = v;
  return true;
}

std::string format_seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string host_port_text(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

const std::string* find_field(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? nullptr : &it->second;
}

void note_heartbeat_ack(const Fields& ack, std::uint64_t seq, Clock::time_point sent, double& rtt_ms) {
  auto* echoed = find_field(ack, "seq");
  if (!echoed || *echoed != std::to_string(seq)) return;
  const double rtt = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
  rtt_ms = 0.75 * rtt_ms + 0.25 * rtt;
}

// Re-encoded from the decoded frame: the encoding is canonical (sorted fields, one escape per
// character), so sender and receiver get the same bytes for the same claims.
std::string claims_of(const Frame& request) {
  Frame claims = request;
  claims.fields.erase("proof");
  return encode_body(claims);
}

namespace {

std::string get_or_empty(const Fields& f, const std::string& key) {
  auto* v = find_field(f, key);
  return v ? *v : std::string();
}

// Facts are peer text that ends up in logs, status tables and refusals: stored escaped.
std::string get_printable(const Fields& f, const std::string& key) { return printable(get_or_empty(f, key)); }

bool get_int(const Fields& f, const std::string& key, long long min, long long max, int& out,
             std::string& error) {
  long long v = 0;
  auto* text = find_field(f, key);
  if (!text || !parse_int(*text, min, max, v)) {
    error = "field '" + key + "' is missing or not a number in [" + std::to_string(min) + ", " +
            std::to_string(max) + "]";
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

constexpr long long kMaxNodes = 1 << 20;
constexpr double kMaxAssignedTimeoutS = 366.0 * 24 * 3600;  // an init deadline of a year is already absurd
constexpr std::size_t kMaxRunIdChars = kMaxJobIdChars;
constexpr long long kMaxProcs = 1 << 16;  // per node: keeps world_size far from int overflow

}  // namespace

void put_facts(Fields& f, const std::string& prefix, const NodeFacts& facts) {
  f[prefix + "host"] = facts.hostname;
  f[prefix + "addrs"] = join_list(facts.addresses);
  f[prefix + "req"] = std::to_string(facts.requested_node_rank);
  f[prefix + "nproc"] = std::to_string(facts.nproc);
  f[prefix + "gpus"] = std::to_string(facts.gpu_count);
  f[prefix + "lv"] = facts.launcher_version;
  f[prefix + "fp"] = facts.program_fingerprint;
  f[prefix + "drv"] = facts.driver_version;
  f[prefix + "cuda"] = facts.cuda_version;
  f[prefix + "nccl"] = facts.nccl_version;
  f[prefix + "ifname"] = facts.socket_ifname;
  f[prefix + "probe"] = facts.probe_endpoints;
  f[prefix + "nodes"] = std::to_string(facts.expected_nodes);
  f[prefix + "role"] = facts.role;
}

bool get_facts(const Fields& f, const std::string& prefix, NodeFacts& out, std::string& error) {
  NodeFacts facts;
  facts.hostname = get_printable(f, prefix + "host");
  for (auto& address : split_list(get_or_empty(f, prefix + "addrs"))) facts.addresses.push_back(printable(address));
  if (!get_int(f, prefix + "req", -1, kMaxNodes, facts.requested_node_rank, error) ||
      !get_int(f, prefix + "nproc", 1, kMaxProcs, facts.nproc, error) ||
      !get_int(f, prefix + "gpus", 0, kMaxProcs, facts.gpu_count, error))
    return false;
  if (find_field(f, prefix + "nodes") && !get_int(f, prefix + "nodes", 0, kMaxNodes, facts.expected_nodes, error))
    return false;
  facts.role = get_printable(f, prefix + "role");
  facts.launcher_version = get_printable(f, prefix + "lv");
  facts.program_fingerprint = get_printable(f, prefix + "fp");
  facts.driver_version = get_printable(f, prefix + "drv");
  facts.cuda_version = get_printable(f, prefix + "cuda");
  facts.nccl_version = get_printable(f, prefix + "nccl");
  facts.socket_ifname = get_printable(f, prefix + "ifname");
  facts.probe_endpoints = get_printable(f, prefix + "probe");
  out = std::move(facts);
  return true;
}

std::string encode_node_list(const std::vector<NodeRecord>& nodes) {
  std::string out;
  append_field_line(out, "n.count", std::to_string(nodes.size()));
  Fields f;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::string prefix = "n." + std::to_string(i) + ".";
    f.clear();
    put_facts(f, prefix, nodes[i].facts);
    f[prefix + "rank"] = std::to_string(nodes[i].node_rank);
    f[prefix + "obs"] = nodes[i].observed_address;
    f[prefix + "rtt"] = format_double(nodes[i].rtt_ms);
    for (const auto& [k, v] : f) append_field_line(out, k, v);
  }
  return out;
}

void put_assignment(Frame& frame, const Assignment& a) {
  Fields& f = frame.fields;
  frame.generation = a.generation;
  f["node_rank"] = std::to_string(a.node_rank);
  f["node_count"] = std::to_string(a.node_count);
  f["rank_offset"] = std::to_string(a.rank_offset);
  f["world_size"] = std::to_string(a.world_size);
  f["master_addr"] = a.worker_master_addr;
  f["master_port"] = std::to_string(a.worker_master_port);
  f["timeout_s"] = format_double(a.init_deadline_s);
  f["run_id"] = a.run_id;
  if (!a.run_nonce.empty()) f["run_nonce"] = a.run_nonce;
}

bool get_assignment(const Frame& frame, Assignment& out, std::string& error) {
  const Fields& f = frame.fields;
  Assignment a;
  a.generation = frame.generation;
  if (!get_int(f, "node_count", 1, kMaxNodes, a.node_count, error) ||
      !get_int(f, "node_rank", 0, a.node_count - 1, a.node_rank, error) ||
      !get_int(f, "world_size", 1, 2147483647, a.world_size, error) ||
      !get_int(f, "rank_offset", 0, a.world_size - 1, a.rank_offset, error) ||
      !get_int(f, "master_port", 0, 65535, a.worker_master_port, error))
    return false;
  auto* timeout = find_field(f, "timeout_s");
  if (!timeout || !parse_double(*timeout, a.init_deadline_s) || !std::isfinite(a.init_deadline_s) || a.init_deadline_s <= 0 ||
      a.init_deadline_s > kMaxAssignedTimeoutS) {
    error = "field 'timeout_s' is missing or not a number of seconds above 0";
    return false;
  }
  a.worker_master_addr = get_or_empty(f, "master_addr");
  a.run_id = get_or_empty(f, "run_id");
  a.run_nonce = get_or_empty(f, "run_nonce");
  // What the workers' environment gets: an address that is a host name or an IP literal, and
  // ids without control characters (a master's text never reaches a terminal or env raw).
  if (!a.worker_master_addr.empty() && !is_host_or_ip_literal(a.worker_master_addr)) {
    error = "field 'master_addr' is not a host name or IP address";
    return false;
  }
  if (a.run_id.size() > kMaxRunIdChars || printable(a.run_id) != a.run_id) {
    error = "field 'run_id' is longer than " + std::to_string(kMaxRunIdChars) + " characters or not printable";
    return false;
  }
  if (!is_run_nonce(a.run_nonce)) {
    error = "field 'run_nonce' is not a nonce";
    return false;
  }
  if (auto* count_text = find_field(f, "n.count")) {
    long long count = 0;
    if (!parse_int(*count_text, 0, kMaxNodes, count)) {
      error = "field 'n.count' is not a number";
      return false;
    }
    // Never reserve on the peer's word alone: a 30-byte frame may claim a million nodes.
    a.nodes.reserve(std::min(static_cast<std::size_t>(count), f.size()));
    for (long long i = 0; i < count; ++i) {
      std::string prefix = "n." + std::to_string(i) + ".";
      NodeRecord r;
      if (!get_facts(f, prefix, r.facts, error) ||
          !get_int(f, prefix + "rank", 0, kMaxNodes, r.node_rank, error))
        return false;
      r.observed_address = get_or_empty(f, prefix + "obs");
      if (auto* rtt = find_field(f, prefix + "rtt")) parse_double(*rtt, r.rtt_ms);
      a.nodes.push_back(std::move(r));
    }
  }
  out = std::move(a);
  return true;
}

}  // namespace ddplaunch::rendezvous::detail
