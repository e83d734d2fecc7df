// The job's timeline as one self-contained HTML page: the page template (timeline_page.html,
// built into the binary) with the trace JSON inside it. No network fetch: it opens from a
// file:// URL, on a machine without internet.
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch::timeline {

// The template's text (made at build time from timeline_page.html).
std::string_view timeline_page_template();
// The page for one trace (trace_json's text, or reserialized_trace's: JSON, never anything
// else). Every "<" inside it is written "\u003c" and U+2028/U+2029 "\u2028"/"\u2029" (the
// same JSON strings) so that no text of the job's can end or confuse the page's script
// ("</script>", "<!--", a line break inside a string).
std::string timeline_page(std::string_view trace_json);

}  // namespace ddplaunch::timeline
