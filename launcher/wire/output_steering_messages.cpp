// The rank list of the output filter.
#include "wire/output_steering_messages.h"

#include "ddplaunch/base/index_list.h"

namespace ddplaunch::messages {

namespace {
constexpr int kMaxListedRank = 1 << 22;  // far above any world size
}

std::string RankList::write(const std::vector<int>& ranks) const { return format_index_list(ranks); }
bool RankList::read(const std::string* sent, std::vector<int>& ranks) const {
  if (!sent || sent->empty()) return true;
  auto parsed = parse_index_list(*sent, kMaxListedRank);
  if (!parsed) return false;
  ranks = std::move(*parsed);
  return true;
}

}  // namespace ddplaunch::messages
