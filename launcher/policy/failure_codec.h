// One codec for a FailureReport wherever it travels: the failure a node sends the master and
// the failures inside the job policy's saved state are written from one field list
// (StateFields<FailureReport>, record_state.h), so neither can lose a field the other keeps.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "policy/failure.h"

namespace ddplaunch {

// The report as one JSON text (text that is not UTF-8, such as a worker's last bytes, comes
// back byte for byte).
std::string encode_failure_report(const FailureReport& report);
// The report, or nothing with `error` saying which field is missing or malformed. The text
// is taken as it came: what another launcher sent is made printable by its reader.
std::optional<FailureReport> decode_failure_report(std::string_view json, std::string& error);

}  // namespace ddplaunch
