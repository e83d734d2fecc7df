// The inspection commands' link to the master: one held connection, typed queries asked again
// after a drop, refusals told apart.
#include "inspect/console_master_link.h"

#include <array>
#include <thread>

#include <fmt/format.h>

#include "inspect/remote_console.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

namespace {
constexpr auto kQueryBound = std::chrono::seconds(10);
// The pauses before each new try: about six seconds in all, far longer than a busy master
// closes new connections, short enough to say soon that the job has ended.
constexpr std::array<std::chrono::milliseconds, 5> kPausesBeforeRetry{
    std::chrono::milliseconds(250), std::chrono::milliseconds(500), std::chrono::milliseconds(1000),
    std::chrono::milliseconds(2000), std::chrono::milliseconds(2000)};

using Kind = rendezvous::QueryFailure::Kind;

bool is_refusal(Kind kind) { return kind == Kind::Refused || kind == Kind::UnprovenMaster; }

// Only a query that went unanswered may have been carried out: refused connections, and ones
// closed before the answer (a busy master closes a new one before its greeting), were not.
bool may_have_been_carried_out(Kind kind) { return kind == Kind::NoAnswer; }
}  // namespace

ConsoleMasterLink::ConsoleMasterLink(const RemoteConsoleTarget& target)
    : session_(target.host, target.port, target.job_id, target.token),
      where_(fmt::format("{}:{}", target.host, target.port)) {}

Result<InspectionReply> ConsoleMasterLink::fail(Failure failure, std::string why) {
  failure_ = failure;
  return Result<InspectionReply>::failure(std::move(why));
}

Result<InspectionReply> ConsoleMasterLink::ask(const InspectionQuery& query, Repeat repeat,
                                               std::chrono::milliseconds wait) {
  const std::string text = encode_inspection_query(query);
  const rendezvous::QueryWait held{text == last_query_ ? last_digest_ : std::string(), wait};
  const auto started = std::chrono::steady_clock::now();
  rendezvous::QueryFailure failure;
  std::size_t tries = 0;
  for (std::size_t attempt = 0;; ++attempt) {
    ++tries;
    const rendezvous::QueryAnswer answer = session_.ask(text, failure, kQueryBound, held);
    if (!failure.failed()) {
      answered_once_ = true;
      last_query_ = text;
      last_digest_ = answer.digest;
      Result<InspectionReply> reply = decode_inspection_reply(answer.text);
      if (!reply)
        return fail(Failure::Refused, fmt::format("the master at {} gave an answer this ddplaunch cannot read: {}", where_,
                                                  rendezvous::printable(reply.error)));
      if (reply->kind == ReplyKind::Refused) return fail(Failure::Refused, rendezvous::printable(reply->text));
      failure_ = Failure::None;
      return reply;
    }
    if (is_refusal(failure.kind)) return fail(Failure::Refused, rendezvous::printable(failure.text));
    if (repeat == Repeat::OnlyWhereNotCarriedOut && may_have_been_carried_out(failure.kind))
      return fail(Failure::Unsure, rendezvous::printable(failure.text));
    // A refused connection, twice, is no busy master: nothing listens there any more, the job
    // has ended (said within a quarter second, not after every pause). At the first ask it is
    // no master at all.
    if (failure.kind == Kind::NothingListens && (attempt >= 1 || !answered_once_)) break;
    if (attempt == kPausesBeforeRetry.size()) break;
    std::this_thread::sleep_for(kPausesBeforeRetry[attempt]);
  }
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string why = tries == 1 ? rendezvous::printable(failure.text)
                                     : fmt::format("{} tries over {:.1f} s, the last: {}", tries, seconds,
                                                   rendezvous::printable(failure.text));
  return fail(answered_once_ ? Failure::Gone : Failure::Unreachable, why);
}

}  // namespace ddplaunch
