// RankTailRelay: leases to the nodes, the followed ranks' buffers, and the poll protocol.
#include "master/rank_tail_relay.h"

#include <charconv>

#include <fmt/format.h>

namespace ddplaunch {

namespace {
constexpr std::string_view kVerb = "tail ";

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}
}  // namespace

std::string encode_tail_request(const TailRequest& request) {
  return fmt::format("tail {} {}", request.rank, request.from);
}

std::optional<TailRequest> decode_tail_request(std::string_view query) {
  if (query.substr(0, kVerb.size()) != kVerb) return std::nullopt;
  query.remove_prefix(kVerb.size());
  const std::size_t space = query.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  TailRequest request;
  if (!parse_number(query.substr(0, space), request.rank) || !parse_number(query.substr(space + 1), request.from) ||
      request.rank < 0 || request.from < -1)
    return std::nullopt;
  return request;
}

std::string encode_tail_reply(const TailReply& reply) {
  if (!reply.error.empty()) return "error: " + reply.error;
  return fmt::format("tail {} {}\n{}", reply.slice.next, reply.slice.missed, reply.slice.lines);
}

std::optional<TailReply> decode_tail_reply(std::string_view text) {
  TailReply reply;
  if (text.substr(0, 7) == "error: ") {
    reply.error = std::string(text.substr(7));
    return reply;
  }
  const std::size_t newline = text.find('\n');
  if (text.substr(0, kVerb.size()) != kVerb || newline == std::string_view::npos) return std::nullopt;
  const std::string_view head = text.substr(kVerb.size(), newline - kVerb.size());
  const std::size_t space = head.find(' ');
  if (space == std::string_view::npos || !parse_number(head.substr(0, space), reply.slice.next) ||
      !parse_number(head.substr(space + 1), reply.slice.missed))
    return std::nullopt;
  reply.slice.lines = std::string(text.substr(newline + 1));
  return reply;
}

void RankTailRelay::on_output(const messages::RankOutput& output) {
  auto followed = followed_.find(output.rank);
  if (followed == followed_.end()) return;  // nobody asked (or no longer)
  if (output.dropped > 0)
    followed->second.buffer.append(fmt::format("[ddplaunch: {} line(s) of rank {} were dropped on its node: it "
                                               "printed faster than they could be relayed; its log file has them]\n",
                                               output.dropped, output.rank));
  followed->second.buffer.append(output.lines);
}

void RankTailRelay::forget_unpolled(Clock::time_point now) {
  for (auto it = followed_.begin(); it != followed_.end();)
    if (now - it->second.polled > kForgetAfter) it = followed_.erase(it);
    else ++it;
}

TailReply RankTailRelay::reply(const TailRequest& request, int world_size, Clock::time_point now) {
  if (request.rank >= world_size)
    return {{}, fmt::format("there is no rank {} in this job (ranks 0-{})", request.rank, world_size - 1)};
  forget_unpolled(now);
  auto found = followed_.find(request.rank);
  if (found == followed_.end()) {
    if (followed_.size() >= kMaxFollowed)
      return {{}, fmt::format("{} ranks are followed already (at most {}); try again once a `ddplaunch tail` ends",
                              followed_.size(), kMaxFollowed)};
    found = followed_.emplace(request.rank, Followed{}).first;
  }
  Followed& f = found->second;
  f.polled = now;
  if (f.asked == Clock::time_point{} || now - f.asked >= kRenewAfter) {
    f.asked = now;
    ask_nodes_(request.rank, kLeaseSeconds);
  }
  RankTailBuffer::Slice slice = f.buffer.read(request.from, kMaxReplyBytes);
  f.delivered = slice.next;
  return {std::move(slice), ""};
}

bool RankTailRelay::unread(Clock::time_point now) const {
  for (const auto& [rank, f] : followed_)
    if (now - f.polled < std::chrono::seconds(1) && f.buffer.next() > f.delivered) return true;
  return false;
}

}  // namespace ddplaunch
