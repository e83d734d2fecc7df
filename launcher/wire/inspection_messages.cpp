// The inspection protocol's records, each field named once (NLOHMANN_DEFINE_*), as JSON.
#include "wire/inspection_messages.h"

#include <csignal>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ddplaunch {

NLOHMANN_JSON_SERIALIZE_ENUM(InspectionAsk, {{InspectionAsk::StatusTable, "status"},
                                             {InspectionAsk::StatusJson, "status_json"},
                                             {InspectionAsk::Timeline, "timeline"},
                                             {InspectionAsk::Tail, "tail"},
                                             {InspectionAsk::Stacks, "stacks"},
                                             {InspectionAsk::DebugPoll, "debug_poll"},
                                             {InspectionAsk::DebugLine, "debug_line"}})
NLOHMANN_JSON_SERIALIZE_ENUM(ReplyKind, {{ReplyKind::Refused, "refused"},
                                         {ReplyKind::Answer, "answer"},
                                         {ReplyKind::Pending, "pending"}})
NLOHMANN_JSON_SERIALIZE_ENUM(JobEnd, {{JobEnd::NotEnded, "not_ended"},
                                      {JobEnd::Succeeded, "succeeded"},
                                      {JobEnd::Failed, "failed"},
                                      {JobEnd::Stopped, "stopped"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InspectionQuery, ask, rank, from, line)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobStanding, phase, end, exit_status, cause)

}  // namespace ddplaunch

// std::optional<std::string> as null or a string (the prompt).
NLOHMANN_JSON_NAMESPACE_BEGIN
template <>
struct adl_serializer<std::optional<std::string>> {
  static void to_json(json& j, const std::optional<std::string>& value) {
    if (value) j = *value;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<std::string>& value) {
    if (j.is_null()) value.reset();
    else value = j.get<std::string>();
  }
};
NLOHMANN_JSON_NAMESPACE_END

namespace ddplaunch {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InspectionReply, kind, text, job, next, missed, prompt)

namespace {
using Json = nlohmann::json;

// Peer text may hold anything: invalid UTF-8 is replaced, never refused, so the answer stays valid JSON.
std::string dump(const Json& doc) { return doc.dump(-1, ' ', false, Json::error_handler_t::replace); }

// `key` names the record's kind (an enum): a name this build does not know would read as the
// enum's first value, so the name read back must be the name sent.
template <typename Record, typename Kind>
Result<Record> parse(std::string_view text, const char* what, const char* key, Kind Record::*kind, const char* unknown) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object())
    return Result<Record>::failure(fmt::format("{} is not a JSON object ('{:.60}')", what, text));
  try {
    Record record = doc.get<Record>();
    if (!doc.contains(key) || doc.at(key) != Json(record.*kind)) return Result<Record>::failure(unknown);
    return Result<Record>::success(std::move(record));
  } catch (const Json::exception& error) {
    return Result<Record>::failure(fmt::format("{} does not read as this version's: {}", what, error.what()));
  }
}
}  // namespace

InspectionReply refused_reply(std::string why, JobStanding job) {
  InspectionReply reply;
  reply.kind = ReplyKind::Refused;
  reply.text = std::move(why);
  reply.job = std::move(job);
  return reply;
}

JobEnd job_end_of_exit_status(int exit_status) {
  if (exit_status == 0) return JobEnd::Succeeded;
  if (exit_status == 128 + SIGINT || exit_status == 128 + SIGTERM) return JobEnd::Stopped;
  return JobEnd::Failed;
}

std::string describe_job_end(const JobStanding& job) {
  switch (job.end) {
    case JobEnd::NotEnded: return "";
    case JobEnd::Succeeded: return "the job has ended: it succeeded";
    case JobEnd::Failed:
      return fmt::format("the job has ended: it failed (exit status {}){}", job.exit_status,
                         job.cause.empty() ? "" : "; " + job.cause);
    case JobEnd::Stopped:
      return fmt::format("the job has ended: it was stopped (exit status {}){}", job.exit_status,
                         job.cause.empty() ? "" : "; " + job.cause);
  }
  return "";
}

std::string encode_inspection_query(const InspectionQuery& query) { return dump(Json(query)); }

bool is_inspection_query(std::string_view text) { return !text.empty() && text.front() == '{'; }

Result<InspectionQuery> decode_inspection_query(std::string_view text) {
  return parse(text, "the query", "ask", &InspectionQuery::ask,
               "the query asks for something this master does not know (a newer ddplaunch?)");
}

std::string encode_inspection_reply(const InspectionReply& reply) { return dump(Json(reply)); }

Result<InspectionReply> decode_inspection_reply(std::string_view text) {
  Result<InspectionReply> reply = parse(text, "the master's answer", "kind", &InspectionReply::kind,
                                        "the master's answer is of a kind this ddplaunch does not know (another version?)");
  if (reply && reply.value->kind == ReplyKind::Refused && reply.value->text.size() > kMaxRefusalChars)
    reply.value->text.resize(kMaxRefusalChars);
  return reply;
}

}  // namespace ddplaunch
