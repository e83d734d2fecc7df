// The job's timeline as one self-contained HTML page: the page template (timeline_page.html,
// built into the binary) with the trace JSON inside it. No network fetch: it opens from a
// file:// URL, on a machine without internet.
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch::timeline {

// The template's text (made at build time from timeline_page.html).
std::string_view timeline_page_template();
// The page for one trace (trace_json's text). "</" inside it is written "<\/" (the same JSON)
// so that no text of the job's can end the page's script.
std::string timeline_page(std::string_view trace_json);

}  // namespace ddplaunch::timeline
