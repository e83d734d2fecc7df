// The timeline page: the trace JSON put in the template's one placeholder.
#include "timeline/timeline_page.h"

namespace ddplaunch::timeline {

namespace {
constexpr std::string_view kPlaceholder = "/*DDPLAUNCH_TRACE_JSON*/null";
}

std::string timeline_page(std::string_view trace_json) {
  std::string script_safe;
  script_safe.reserve(trace_json.size());
  for (char c : trace_json) {
    if (c == '<') script_safe += "\\u003c";  // only ever inside a JSON string: the same text
    else script_safe += c;
  }
  std::string page(timeline_page_template());
  const std::size_t at = page.find(kPlaceholder);
  if (at == std::string::npos) return page;  // a template without its placeholder draws its "no trace" message
  page.replace(at, kPlaceholder.size(), script_safe);
  return page;
}

}  // namespace ddplaunch::timeline
