// ConsoleQueries: what `ddplaunch debug` asks of the job's debug console through the master's
// queries (JobQueries): its transcript after an offset, and a typed line. DebugRelay answers.
#pragma once

#include <cstddef>
#include <string_view>

#include "wire/inspection_messages.h"

namespace ddplaunch {

class ConsoleQueries {
 public:
  virtual ~ConsoleQueries() = default;
  // The transcript after `from` (what is still kept): text, the new offset (`next`), the prompt.
  virtual InspectionReply transcript_after(std::size_t from) = 0;
  // A line typed at `ddplaunch debug`: run at the console; the answer says what became of it.
  virtual InspectionReply take_line(std::string_view line) = 0;
};

}  // namespace ddplaunch
