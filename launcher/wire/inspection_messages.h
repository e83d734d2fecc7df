// The inspection protocol: what `ddplaunch status|stacks|tail|debug|timeline` ask the job's
// master over the query connection, and what it answers. Each side a typed record whose fields
// are declared once (inspection_messages.cpp lists them once for both directions) and sent as
// one JSON object. An answer always says how the job stands (its phase, and once it ended,
// how: succeeded, failed with its exit status, or stopped), so that a watching client ends on
// a typed field, never on the answer's prose; a refusal is a reply kind, not a text prefix.
// What the master sends is peer text: the client makes `text`, `cause` and `prompt` printable
// before they reach a terminal (rendezvous/printable.h), and a refusal's text is cut at
// kMaxRefusalChars when decoded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/base/result.h"

namespace ddplaunch {

enum class InspectionAsk {
  StatusTable,  // the status tables, as `ddplaunch status` prints them
  StatusJson,   // the same as one JSON document (`--json`)
  Timeline,     // the job's timeline so far, as trace JSON
  Tail,         // a rank's lines after `from` (`ddplaunch tail`)
  Stacks,       // start (or join) a stack round (`from` -1), or ask for round `from`
  DebugPoll,    // the debug console's transcript after offset `from`, and its prompt
  DebugLine,    // a line typed at `ddplaunch debug`
};

struct InspectionQuery {
  InspectionAsk ask = InspectionAsk::StatusTable;
  int rank = -1;     // Tail: the global rank followed
  long from = -1;    // Tail: the next line wanted (-1: the last few); Stacks: the round (-1: a new one);
                     // DebugPoll: the transcript offset
  std::string line;  // DebugLine: the line typed
};

enum class ReplyKind {
  Answer,   // `text` (and the fields of its ask) answer the query
  Pending,  // Stacks: round `next` is under way; ask for it again
  Refused,  // the master cannot or will not answer this: `text` says why (one line)
};

// How the job ended, once it has.
enum class JobEnd { NotEnded, Succeeded, Failed, Stopped };

struct JobStanding {
  std::string phase;              // the master's phase name ("joining", "running", ..., "ended")
  JobEnd end = JobEnd::NotEnded;  // set once the phase is "ended"
  int exit_status = 0;            // the job's exit status once ended (every node exits with it)
  std::string cause;              // Failed or Stopped: the job's root cause, as the master words it
};

struct InspectionReply {
  ReplyKind kind = ReplyKind::Refused;
  std::string text;  // Answer: the table, JSON, trace, stacks, lines or transcript; Refused: why
  JobStanding job;   // the job when this was answered
  long next = 0;     // Tail: the line after the last one sent; Stacks: the round; DebugPoll: the new offset
  long missed = 0;   // Tail: lines that went by before they could be sent
  std::optional<std::string> prompt;  // DebugPoll: the prompt the console waits at (none: none)
};

inline constexpr std::size_t kMaxRefusalChars = 2000;
// The job's timeline goes in one answer up to this size (beyond, the master writes it at the end).
inline constexpr std::size_t kMaxTimelineReplyBytes = 900 * 1024;
// Earlier clients' text queries, still answered: `ddplaunch status --json` and `ddplaunch timeline`.
inline constexpr const char* kStatusJsonQuery = "status json";
inline constexpr const char* kTimelineJsonQuery = "timeline json";

// A refusal (the master's words for why), with the job as it stands.
InspectionReply refused_reply(std::string why, JobStanding job = {});
// The job's end for people: "the job has ended: it succeeded", "...: it failed (exit status 1);
// <cause>", "...: it was stopped (exit status 130)"; "" before the end.
std::string describe_job_end(const JobStanding& job);
// The end as a JobEnd: 0 succeeded; 128 + SIGINT or SIGTERM stopped (interrupted, or asked
// to stop); any other status failed.
JobEnd job_end_of_exit_status(int exit_status);

std::string encode_inspection_query(const InspectionQuery& query);
// A typed query is a JSON object: the one test the master's dispatch makes before decoding.
bool is_inspection_query(std::string_view text);
Result<InspectionQuery> decode_inspection_query(std::string_view text);

std::string encode_inspection_reply(const InspectionReply& reply);
// Any text decodes to a reply or to an error saying what is wrong with it (a master of another
// version, or not a master).
Result<InspectionReply> decode_inspection_reply(std::string_view text);

}  // namespace ddplaunch
