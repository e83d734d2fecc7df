// The console's line editor: keys in, lines out; history; escape sequences never reach a line.
#include <gtest/gtest.h>

#include "output/line_editor.h"

using ddplaunch::EditEvent;
using ddplaunch::LineEditor;

namespace {
std::vector<std::string> lines_of(const std::vector<EditEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    if (e.kind == EditEvent::Kind::Line) out.push_back(e.line);
  return out;
}
}  // namespace

TEST(LineEditor, EditsInTheMiddleWithArrowsBackspaceAndDelete) {
  LineEditor e;
  EXPECT_TRUE(e.feed("p secXret").empty());
  e.feed("\x1b[D\x1b[D\x1b[D" "\x7f");  // Left x3, Backspace: the X
  EXPECT_EQ(e.text(), "p secret");
  EXPECT_EQ(e.cursor(), 5u);
  e.feed("\x1b[H" "\x1b[3~");  // Home, Delete
  EXPECT_EQ(e.text(), " secret");
  e.feed("\x01" "pp");  // Ctrl-A, text
  EXPECT_EQ(e.text(), "pp secret");
  EXPECT_EQ(lines_of(e.feed("\x1b[F\r")), std::vector<std::string>{"pp secret"});
  EXPECT_EQ(e.text(), "");
}

TEST(LineEditor, HistoryRecallsOlderLinesAndKeepsTheDraft) {
  LineEditor e;
  e.feed("p a\rp b\r");
  e.feed("dra");
  e.feed("\x1b[A");
  EXPECT_EQ(e.text(), "p b");
  e.feed("\x1bOA");  // application-mode Up
  EXPECT_EQ(e.text(), "p a");
  e.feed("\x1b[A");  // the oldest stays
  EXPECT_EQ(e.text(), "p a");
  e.feed("\x1b[B\x1b[B");
  EXPECT_EQ(e.text(), "dra");
  e.feed("\x15");  // Ctrl-U
  EXPECT_EQ(e.text(), "");
  EXPECT_EQ(lines_of(e.feed("\x1b[A\r")), std::vector<std::string>{"p b"});
  EXPECT_EQ(e.history().size(), 2u);  // a repeated line is kept once
}

TEST(LineEditor, ControlKeysAreEventsAndUnknownSequencesAreIgnored) {
  LineEditor e;
  auto events = e.feed("x\x03");  // with text: only cleared
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(e.text(), "");
  events = e.feed("\x03");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EditEvent::Kind::Interrupt);
  events = e.feed("\x04");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EditEvent::Kind::EndOfInput);
  e.feed("ab\x1b[15~\x1b[5~c\x07");  // F5, PageUp, a bell: nothing
  EXPECT_EQ(e.text(), "abc");
  e.feed("\x17");  // Ctrl-W
  EXPECT_EQ(e.text(), "");
  e.feed("one two\x17");
  EXPECT_EQ(e.text(), "one ");
  EXPECT_EQ(e.render("> "), "> one ");
  e.feed("\x1b[D\x1b[D");
  EXPECT_EQ(e.render("> "), "> one \x1b[2D");
}

TEST(LineEditor, ALineIsBounded) {
  LineEditor e;
  e.feed(std::string(LineEditor::kMaxLineBytes + 100, 'x'));
  EXPECT_EQ(e.text().size(), LineEditor::kMaxLineBytes);
  // The bytes past the bound are counted on the line, so that the person can be told.
  auto events = e.feed("yy\r");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].line.size(), LineEditor::kMaxLineBytes);
  EXPECT_EQ(events[0].cut_bytes, 102u);
  events = e.feed("short\r");  // the next line starts afresh
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].cut_bytes, 0u);
}
