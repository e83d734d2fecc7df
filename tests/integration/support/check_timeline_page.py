#!/usr/bin/env python3
"""Opens a ddplaunch timeline page in real headless Chromium and checks what it drew.

Usage:
  check_timeline_page.py PAGE.html [--nodes N] [--ranks R] [--min-generations G]
                         [--expect-restart] [--expect-root-cause TEXT] [--phases LIST]
                         [--expect-render-error] [--screenshot OUT.png]

One Chromium run, with a fresh profile under a temporary directory (removed after) and a 60 s
limit, that does both (headless Chromium takes --dump-dom and --screenshot together; a start is
~2 s of CPU, so one start per page): --dump-dom, whose DOM (after the page's script ran) is
checked against the page's stable markers, and --screenshot at 1400x900, whose PNG must not be
blank (enough colours and enough pixels apart from the background). Chromium runs with
--no-sandbox, which it needs as root.

Checks (each one printed, with what was found):
  body data-rendered="yes" and no #render-error box;
  --nodes N: N node groups (g.node-group);  --ranks R: R rank lanes (.lane[data-kind=rank]);
  --min-generations G: at least G generation marks (.generation-mark);
  --expect-restart: an instant .cat-restart and a flow (.flow);
  slices (rect.slice.phase-NAME) of every phase in --phases (default setup,init,running;
  "" for none);  --expect-root-cause TEXT: the #root-cause box holds TEXT.
With --expect-render-error the page must instead show its error box (data-rendered="error"),
as it does for a missing or damaged trace.

The chromium binary: $DDPLAUNCH_CHROMIUM, else chromium, chromium-browser, google-chrome on PATH
(Debian: apt-get install chromium, or scripts/install-deps.sh).
Exit status: 0 all checks passed, 1 a check failed, 2 usage or tool error (no chromium, no page,
Chromium failed or timed out, a PNG this script cannot read).
"""
import argparse
import collections
import html.parser
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

CHROMIUM_TIMEOUT_S = 60
WINDOW = (1400, 900)
MIN_COLOURS = 6  # a drawn timeline has dozens; a blank page has one
MIN_DRAWN_FRACTION = 0.05  # pixels apart from the background colour
MIN_DRAWN_FRACTION_ERROR_PAGE = 0.002  # an error box alone covers little of the window
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class ToolError(Exception):
    """Not a failed check: the check could not be made (exit status 2)."""


# ---- Chromium ----

def find_chromium():
    explicit = os.environ.get("DDPLAUNCH_CHROMIUM")
    if explicit:
        if shutil.which(explicit):
            return shutil.which(explicit)
        raise ToolError("DDPLAUNCH_CHROMIUM=%s is not an executable" % explicit)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    raise ToolError("no chromium on PATH: install it with 'apt-get install -y chromium' "
                    "(or scripts/install-deps.sh), or set DDPLAUNCH_CHROMIUM to the binary")


def run_chromium(chromium, work_dir, extra_args, url):
    """Runs headless Chromium with a fresh profile; returns (stdout bytes, seconds taken)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=work_dir)
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + profile,
               "--virtual-time-budget=5000"] + extra_args + [url]
    started = time.monotonic()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=CHROMIUM_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ToolError("chromium did not finish within %d s: %s" % (CHROMIUM_TIMEOUT_S, " ".join(command)))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    taken = time.monotonic() - started
    if done.returncode != 0:
        raise ToolError("chromium exited %d: %s\n%s" % (done.returncode, " ".join(command), stderr_tail(done.stderr)))
    return done.stdout, done.stderr, taken


def stderr_tail(stderr):
    """Chromium's stderr without its harmless D-Bus complaints, last lines only."""
    lines = [l for l in stderr.decode("utf-8", "replace").splitlines() if "dbus" not in l and l.strip()]
    return "\n".join("  | " + l for l in lines[-15:])


# ---- the DOM ----

class Element:
    def __init__(self, tag, attrs):
        self.tag = tag
        self.attrs = {k: (v if v is not None else "") for k, v in attrs}
        self.classes = set(self.attrs.get("class", "").split())
        self.text = []


class DomScan(html.parser.HTMLParser):
    """Every element with its attributes; the text of those with an id (root-cause, render-error)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.body = None
        self.open_with_id = []  # [element, depth] of elements with an id whose text is gathered

    def handle_starttag(self, tag, attrs):
        e = Element(tag, attrs)
        self.elements.append(e)
        if tag == "body":
            self.body = e
        if tag in VOID_TAGS:
            return
        for entry in self.open_with_id:
            entry[1] += 1
        if "id" in e.attrs:
            self.open_with_id.append([e, 1])

    def handle_startendtag(self, tag, attrs):  # <rect ... /> : an element with nothing inside
        self.elements.append(Element(tag, attrs))

    def handle_endtag(self, tag):
        if tag in VOID_TAGS:
            return
        for entry in self.open_with_id:
            entry[1] -= 1
        self.open_with_id = [entry for entry in self.open_with_id if entry[1] > 0]

    def handle_data(self, data):
        for entry in self.open_with_id:
            entry[0].text.append(data)

    def by_id(self, id_):
        return next((e for e in self.elements if e.attrs.get("id") == id_), None)

    def with_classes(self, *classes):
        return [e for e in self.elements if e.classes.issuperset(classes)]


def listed(items, sep=", ", most=8):
    """The first few items, for a line of output that stays short for a big job."""
    items = list(items)
    return sep.join(items[:most]) + (sep + "... (%d more)" % (len(items) - most) if len(items) > most else "")


def text_of(element):
    return " ".join("".join(element.text).split()) if element else ""


# ---- the PNG ----

def decode_png(data):
    """(width, height, channels, rows) of an 8-bit RGB or RGBA PNG, not interlaced."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ToolError("the screenshot is not a PNG")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ToolError("the screenshot PNG has no IHDR chunk")
    width, height, depth, colour_type, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour_type)
    if depth != 8 or channels is None or interlace != 0:
        raise ToolError("the screenshot PNG is bit depth %d, colour type %d, interlace %d: only 8-bit "
                        "RGB or RGBA without interlace is read here" % (depth, colour_type, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    if len(raw) < height * (stride + 1):
        raise ToolError("the screenshot PNG's image data is short")
    rows, prev = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise ToolError("the screenshot PNG has filter type %d on row %d" % (kind, y))
        line = bytes(line)
        rows.append(line)
        prev = line
    return width, height, channels, rows


def png_colour_stats(path):
    """(distinct colours, fraction of pixels not the most common colour, width, height)."""
    with open(path, "rb") as f:
        width, height, channels, rows = decode_png(f.read())
    counts = collections.Counter()
    for line in rows:
        counts.update(line[i:i + 3] for i in range(0, len(line), channels))
    background = counts.most_common(1)[0][1]
    return len(counts), 1.0 - background / float(width * height), width, height


# ---- the checks ----

class Report:
    def __init__(self):
        self.failures = 0

    def check(self, ok, what, found):
        print("  %s %s (%s)" % ("ok  " if ok else "FAIL", what, found))
        if not ok:
            self.failures += 1


def check_dom(dom, args, report):
    body = dom.body.attrs if dom.body else {}
    error_box = dom.by_id("render-error")
    if args.expect_render_error:
        report.check(body.get("data-rendered") == "error", 'body data-rendered="error"',
                     "found %r" % body.get("data-rendered"))
        report.check(error_box is not None, "the #render-error box is shown",
                     repr(text_of(error_box)) if error_box else "absent")
        return
    report.check(body.get("data-rendered") == "yes", 'body data-rendered="yes"',
                 "found %r, render %s ms" % (body.get("data-rendered"), body.get("data-render-ms", "?")))
    report.check(error_box is None, "no #render-error box", repr(text_of(error_box)) if error_box else "none")

    lanes = dom.with_classes("lane")
    kinds = collections.Counter(e.attrs.get("data-kind", "?") for e in lanes)
    groups = dom.with_classes("node-group")
    report.check(kinds["job"] >= 1, "a job lane", "lanes: %s" % dict(kinds))
    if args.nodes is not None:
        report.check(len(groups) == args.nodes, "%d node groups" % args.nodes,
                     "found %d: %s" % (len(groups), listed(g.attrs.get("data-label", "?") for g in groups)))
    if args.ranks is not None:
        report.check(kinds["rank"] == args.ranks, "%d rank lanes" % args.ranks, "found %d" % kinds["rank"])
    marks = dom.with_classes("generation-mark")
    if args.min_generations is not None:
        report.check(len(marks) >= args.min_generations, "at least %d generation marks" % args.min_generations,
                     "found %d: %s" % (len(marks), listed(m.attrs.get("data-generation", "?") for m in marks)))
    if args.expect_restart:
        restarts = dom.with_classes("instant", "cat-restart")
        flows = dom.with_classes("flow")
        report.check(len(restarts) >= 1, "a restart marker", "found %d: %s" % (
            len(restarts), listed((r.attrs.get("data-name", "?") for r in restarts), "; ", 3)))
        report.check(len(flows) >= 1, "a flow (failure -> restart)", "found %d: %s" % (
            len(flows), listed(("%s -> %s" % (f.attrs.get("data-from"), f.attrs.get("data-to")) for f in flows), "; ", 3)))
    slices = dom.with_classes("slice")
    by_phase = collections.Counter(next((c[6:] for c in e.classes if c.startswith("phase-")), "?") for e in slices)
    for phase in [p for p in args.phases.split(",") if p]:
        report.check(by_phase[phase] >= 1, "slices of phase %s" % phase, "found %d of %d slices" % (by_phase[phase], len(slices)))
    if args.expect_time_account:
        account = dom.by_id("time-account")
        text = text_of(account) if account is not None else ""
        report.check(text.endswith("%"), "the effective training share in the header",
                     "found %r" % text if account is not None else "no #time-account element")
    if args.expect_root_cause is not None:
        text = text_of(dom.by_id("root-cause"))
        want = " ".join(args.expect_root_cause.split())
        report.check(want in text, "the root-cause box holds %r" % want, "it says %r" % text)
    print("  drew: %d lanes, %d node groups, %d slices, %d instants, %d flows, %d generation marks" % (
        len(lanes), len(groups), len(slices), len(dom.with_classes("instant")), len(dom.with_classes("flow")), len(marks)))


def main(argv):
    parser = argparse.ArgumentParser(description="Check a ddplaunch timeline page in headless Chromium.")
    parser.add_argument("page")
    parser.add_argument("--nodes", type=int, help="node groups the page must show")
    parser.add_argument("--ranks", type=int, help="rank lanes the page must show")
    parser.add_argument("--min-generations", type=int, help="generation marks the page must show at least")
    parser.add_argument("--expect-restart", action="store_true", help="a restart marker and a flow to it")
    parser.add_argument("--expect-time-account", action="store_true", help="the effective training share in the header")
    parser.add_argument("--expect-root-cause", metavar="TEXT", help="text the root-cause box must hold")
    parser.add_argument("--phases", default="setup,init,running", help="phases with at least one slice (comma-separated)")
    parser.add_argument("--expect-render-error", action="store_true", help="the page must show its error box instead")
    parser.add_argument("--screenshot", metavar="OUT.png", help="where to keep the screenshot")
    args = parser.parse_args(argv[1:])
    sys.stdout.reconfigure(errors="backslashreplace")  # job text in any locale

    page = pathlib.Path(args.page).resolve()
    work_dir = None
    try:
        if not page.is_file():
            raise ToolError("no page at %s" % page)
        chromium = find_chromium()
        url = page.as_uri()
        work_dir = tempfile.mkdtemp(prefix="check-timeline-page-")
        report = Report()

        shot = os.path.abspath(args.screenshot) if args.screenshot else os.path.join(work_dir, "page.png")
        if os.path.exists(shot):
            os.remove(shot)
        dom_text, stderr, taken = run_chromium(
            chromium, work_dir, ["--dump-dom", "--screenshot=" + shot, "--window-size=%d,%d" % WINDOW], url)
        if not dom_text.strip():
            raise ToolError("chromium printed no DOM for %s\n%s" % (url, stderr_tail(stderr)))
        print("%s: DOM and screenshot from %s in %.1f s" % (page, chromium, taken))
        dom = DomScan()
        dom.feed(dom_text.decode("utf-8", "replace"))
        dom.close()
        check_dom(dom, args, report)

        if not os.path.isfile(shot):
            raise ToolError("chromium wrote no screenshot to %s\n%s" % (shot, stderr_tail(stderr)))
        colours, drawn, width, height = png_colour_stats(shot)
        print("screenshot %dx%d%s" % (width, height, ": " + shot if args.screenshot else ""))
        min_drawn = MIN_DRAWN_FRACTION_ERROR_PAGE if args.expect_render_error else MIN_DRAWN_FRACTION
        min_colours = 2 if args.expect_render_error else MIN_COLOURS
        report.check(colours >= min_colours, "at least %d distinct colours" % min_colours, "found %d" % colours)
        report.check(drawn >= min_drawn, "at least %.1f%% of pixels drawn" % (100 * min_drawn),
                     "%.1f%% differ from the background" % (100 * drawn))
    except ToolError as e:
        print("check_timeline_page: %s" % e, file=sys.stderr)
        return 2
    finally:
        if work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)

    if report.failures:
        print("FAILED: %d check(s) of %s" % (report.failures, page))
        return 1
    print("passed: %s" % page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
