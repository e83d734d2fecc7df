// FailureReport <-> JSON text through its one field list: see failure_codec.h.
#include "policy/failure_codec.h"

#include "policy/record_state.h"

namespace ddplaunch {

std::string encode_failure_report(const FailureReport& report) {
  StateWriter writer(PolicyClock::time_point{});  // a report holds no times
  StateFields<FailureReport>::list(writer, report);
  return std::move(writer).take().dump();
}

std::optional<FailureReport> decode_failure_report(std::string_view json, std::string& error) {
  const StateJson document = StateJson::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    error = "the failure report is not a JSON object";
    return std::nullopt;
  }
  error.clear();
  FailureReport report;
  StateReader reader(document, "", PolicyClock::time_point{}, &error);
  StateFields<FailureReport>::list(reader, report);
  if (!error.empty()) return std::nullopt;
  return report;
}

}  // namespace ddplaunch
