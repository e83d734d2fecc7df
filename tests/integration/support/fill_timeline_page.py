#!/usr/bin/env python3
"""Makes a timeline page from the template and a trace JSON file, as ddplaunch does in C++.

Usage: fill_timeline_page.py TEMPLATE.html TRACE.json OUT.html

The trace's text goes in place of the template's one placeholder, as it is (no JSON parsing, so a
damaged trace makes a page that must show its error box), with every "<" written "\\u003c" (inside a JSON
string, the same text) so that no text of the job's can end or confuse the page's script (the same substitution as timeline_page() in
launcher/timeline/timeline_page.cpp). Exits 2 when the template has no placeholder or several.
"""
import sys

PLACEHOLDER = "/*DDPLAUNCH_TRACE_JSON*/null"


def script_safe(trace_text):
    """The trace text, safe inside a <script> element: "<" becomes "\\u003c" (the same JSON)."""
    return trace_text.replace("<", "\\u003c")


def fill(template_text, trace_text):
    count = template_text.count(PLACEHOLDER)
    if count != 1:
        raise ValueError("the template holds the placeholder %s %d times (want exactly 1)" % (PLACEHOLDER, count))
    return template_text.replace(PLACEHOLDER, script_safe(trace_text))


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    template_path, trace_path, out_path = argv[1:]
    try:
        with open(template_path, encoding="utf-8") as f:
            template_text = f.read()
        with open(trace_path, encoding="utf-8") as f:
            trace_text = f.read()
        page = fill(template_text, trace_text)
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(page)
    except (OSError, ValueError) as e:
        print("fill_timeline_page: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
