// The remote console's queries, asked again after a drop, refusals told apart.
#include "console/console_master_link.h"

#include <array>
#include <thread>

#include <fmt/format.h>

#include "console/remote_console.h"
#include "ddplaunch/rendezvous/client.h"
#include "ddplaunch/rendezvous/printable.h"

namespace ddplaunch {

namespace {
constexpr auto kQueryBound = std::chrono::seconds(5);
// The pauses before each new try: about six seconds in all, far longer than a busy master
// closes new connections, short enough to say soon that the job has ended.
constexpr std::array<std::chrono::milliseconds, 5> kPausesBeforeRetry{
    std::chrono::milliseconds(250), std::chrono::milliseconds(500), std::chrono::milliseconds(1000),
    std::chrono::milliseconds(2000), std::chrono::milliseconds(2000)};

using Failure = rendezvous::QueryFailure::Kind;

bool is_refusal(Failure kind) { return kind == Failure::Refused || kind == Failure::UnprovenMaster; }

// Only a query that went unanswered may have been carried out: refused connections, and ones
// closed before the answer (a busy master closes a new one before its greeting), were not.
bool may_have_been_carried_out(Failure kind) { return kind == Failure::NoAnswer; }
}  // namespace

ConsoleMasterLink::ConsoleMasterLink(const RemoteConsoleTarget& target)
    : host_(target.host),
      port_(target.port),
      job_id_(target.job_id),
      token_(target.token),
      where_(fmt::format("{}:{}", target.host, target.port)) {}

MasterAnswer ConsoleMasterLink::ask(const std::string& query, Repeat repeat) const {
  const auto started = std::chrono::steady_clock::now();
  rendezvous::QueryFailure failure;
  std::size_t tries = 0;
  for (std::size_t attempt = 0;; ++attempt) {
    ++tries;
    std::string answer = rendezvous::query_master(host_, port_, job_id_, token_, query, kQueryBound, failure);
    if (!failure.failed()) return {MasterAnswer::Kind::Answered, std::move(answer)};
    if (is_refusal(failure.kind)) return {MasterAnswer::Kind::Refused, rendezvous::printable(failure.text)};
    if (repeat == Repeat::OnlyWhereNotCarriedOut && may_have_been_carried_out(failure.kind))
      return {MasterAnswer::Kind::Unsure, rendezvous::printable(failure.text)};
    // A refused connection, twice, is no busy master: nothing listens there any more, the job
    // has ended (said within a quarter second, not after every pause).
    if (failure.kind == Failure::NothingListens && attempt >= 1) break;
    if (attempt == kPausesBeforeRetry.size()) break;
    std::this_thread::sleep_for(kPausesBeforeRetry[attempt]);
  }
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return {MasterAnswer::Kind::Gone, fmt::format("{} tries over {:.1f} s, the last: {}", tries, seconds,
                                                rendezvous::printable(failure.text))};
}

}  // namespace ddplaunch
