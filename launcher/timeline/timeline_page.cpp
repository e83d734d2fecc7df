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
    const std::string_view rest = trace_json.substr(i);
    // Each only ever inside a JSON string, where the escape is the same text: "<" could end
    // the script ("</script>", "<!--"); U+2028 and U+2029 end a line in older JavaScript.
    if (rest.front() == '<') {
      script_safe += "\\u003c";
    } else if (rest.starts_with("\xE2\x80\xA8") || rest.starts_with("\xE2\x80\xA9")) {
      script_safe += rest[2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      script_safe += rest.front();
    }
  }
  std::string page(timeline_page_template());
  const std::size_t at = page.find(kPlaceholder);
  if (at == std::string::npos) return page;  // a template without its placeholder draws its "no trace" message
  page.replace(at, kPlaceholder.size(), script_safe);
  return page;
}

}  // namespace ddplaunch::timeline
