// The timeline page: the trace JSON put in the template's one placeholder.
#include "timeline/timeline_page.h"

namespace ddplaunch::timeline {

namespace {
constexpr std::string_view kPlaceholder = "/*DDPLAUNCH_TRACE_JSON*/null";
}

std::string timeline_page(std::string_view trace_json) {
  std::string script_safe;
  script_safe.reserve(trace_json.size());
  for (std::size_t i = 0; i < trace_json.size(); ++i) {
    script_safe += trace_json[i];
    if (trace_json[i] == '<' && i + 1 < trace_json.size() && trace_json[i + 1] == '/') script_safe += '\\';
  }
  std::string page(timeline_page_template());
  const std::size_t at = page.find(kPlaceholder);
  if (at == std::string::npos) return page;  // a template without its placeholder draws its "no trace" message
  page.replace(at, kPlaceholder.size(), script_safe);
  return page;
}

}  // namespace ddplaunch::timeline
