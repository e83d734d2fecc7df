// decide_stacks_query and the stacks query's codec: see stacks_query.h.
#include "policy/stacks_query.h"

#include <charconv>
#include <chrono>

#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

StacksQueryAnswer decide_stacks_query(const StacksQueryFacts& f) {
  using Kind = StacksQueryAnswer::Kind;
  if (f.multi_node && !f.has_token)
    return {Kind::Refuse, 0,
            "this multi-node job has no rendezvous token, so anyone who reaches its port could interrupt "
            "every rank: ddplaunch stacks is refused; start the job with DDPLAUNCH_TOKEN (or --token-file) set on "
            "every node, and ask with the same token"};
  if (f.in_flight) return {Kind::Join, *f.in_flight, {}};
  const double since_last = std::chrono::duration<double>(f.now - f.last_started).count();
  if (f.last_round && since_last < kMinStacksIntervalS) return {Kind::Join, *f.last_round, {}};
  return {Kind::Start, 0, {}};
}

namespace {
constexpr std::string_view kStacksQuery = "stacks";
constexpr std::string_view kPending = "pending ";
constexpr std::string_view kDone = "done\n";
constexpr std::string_view kError = "error: ";

// A round on the wire: digits only (no sign, no space), within a long.
std::optional<long> parse_round(std::string_view text) {
  long round = 0;
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), round);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return round;
}

StacksReply error_reply(std::string_view why) {
  const bool cut = why.size() > kMaxStacksErrorChars;
  return {StacksReply::Kind::Error, 0,
          rendezvous::printable(why.substr(0, kMaxStacksErrorChars)) + (cut ? " [...]" : "")};
}
}  // namespace

std::string encode_stacks_request(const StacksRequest& request) {
  std::string query(kStacksQuery);
  if (request.round) query += " " + std::to_string(*request.round);
  return query;
}

std::optional<StacksRequest> decode_stacks_request(std::string_view query) {
  if (query == kStacksQuery) return StacksRequest{};
  if (!query.starts_with(kStacksQuery) || query.substr(kStacksQuery.size(), 1) != " ") return std::nullopt;
  auto round = parse_round(query.substr(kStacksQuery.size() + 1));
  if (!round) return std::nullopt;
  return StacksRequest{round};
}

std::string encode_stacks_reply(const StacksReply& reply) {
  switch (reply.kind) {
    case StacksReply::Kind::Pending: return std::string(kPending) + std::to_string(reply.round);
    case StacksReply::Kind::Done: return std::string(kDone) + reply.text;
    case StacksReply::Kind::Error: break;
  }
  return std::string(kError) + reply.text;
}

StacksReply decode_stacks_reply(std::string_view answer) {
  if (answer.starts_with(kDone)) return {StacksReply::Kind::Done, 0, std::string(answer.substr(kDone.size()))};
  if (answer.starts_with(kPending)) {
    if (auto round = parse_round(answer.substr(kPending.size()))) return {StacksReply::Kind::Pending, *round, {}};
    return error_reply("malformed answer (no round after 'pending'): " + std::string(answer.substr(0, 80)));
  }
  if (answer.starts_with(kError)) return error_reply(answer.substr(kError.size()));
  return error_reply("unexpected answer: " + std::string(answer.substr(0, 80)));
}

}  // namespace ddplaunch
