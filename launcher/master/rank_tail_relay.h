// RankTailRelay: the master's side of `ddplaunch tail --rank R`. A client asks for rank R's
// lines after FROM (a typed Tail query, or the text "tail R FROM" of earlier clients); the relay asks the nodes for that rank's lines (a lease of
// kLeaseSeconds, renewed while someone polls), keeps them in a RankTailBuffer and answers
// with the lines after FROM. Ranks nobody polled for a minute are forgotten; at most
// kMaxFollowed ranks are followed at once.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "wire/launcher_messages.h"
#include "output/rank_tail_buffer.h"

namespace ddplaunch {

struct TailRequest {
  int rank = -1;
  long from = -1;  // the next line wanted; -1: start with the last few
};
std::string encode_tail_request(const TailRequest& request);
std::optional<TailRequest> decode_tail_request(std::string_view query);

struct TailReply {
  RankTailBuffer::Slice slice;
  std::string error;  // non-empty: the master refused (then no slice)
};
std::string encode_tail_reply(const TailReply& reply);
std::optional<TailReply> decode_tail_reply(std::string_view text);

class RankTailRelay {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kLeaseSeconds = 10;
  static constexpr auto kRenewAfter = std::chrono::seconds(3);
  static constexpr auto kForgetAfter = std::chrono::seconds(60);
  static constexpr std::size_t kMaxFollowed = 64;
  static constexpr std::size_t kMaxReplyBytes = 256 * 1024;

  // ask_nodes(rank, seconds): every node is told to send that rank's lines for that long.
  explicit RankTailRelay(std::function<void(int rank, int seconds)> ask_nodes) : ask_nodes_(std::move(ask_nodes)) {}

  void on_output(const messages::RankOutput& output);
  // The answer to one ask; `world_size`: ranks 0..world_size-1 exist.
  TailReply reply(const TailRequest& request, int world_size, Clock::time_point now);
  // The same as encode_tail_reply's text (earlier clients' form).
  std::string answer(const TailRequest& request, int world_size, Clock::time_point now) {
    return encode_tail_reply(reply(request, world_size, now));
  }
  // A client polled within the last second and lines came for it since: the job's end waits
  // (briefly) for it to read them.
  bool unread(Clock::time_point now) const;

 private:
  struct Followed {
    RankTailBuffer buffer;
    Clock::time_point asked{};    // the last lease given to the nodes
    Clock::time_point polled{};   // the last client's poll
    long delivered = 0;           // the line after the last one answered
  };
  void forget_unpolled(Clock::time_point now);

  std::function<void(int, int)> ask_nodes_;
  std::map<int, Followed> followed_;
};

}  // namespace ddplaunch
