// How one field of a launcher message is written and read back: the vocabulary its declaration
// (message_declaration.h) is written in. A codec's write() gives the text on the wire, bounded
// where the codec says; its read() takes the text another launcher sent (nullptr: the field is
// missing), fills the value and returns false to refuse the whole message. Free text a peer
// sent is printed on this terminal, so every text codec says how it is made printable:
//   Text   one line: control characters and escape sequences become visible escapes
//   Lines  the same, its lines kept apart
//   Entry  logged as one entry: its lines kept apart, every line after the first indented, so
//          that none can pass for a log line of this launcher
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace ddplaunch::messages {

// A whole number. Read: `fallback` when missing, malformed or beyond ±2^30; a value outside
// [min, max] refuses the message.
struct Int {
  int fallback = 0;
  int min = std::numeric_limits<int>::min();
  int max = std::numeric_limits<int>::max();
  std::string write(int value) const;
  bool read(const std::string* sent, int& value) const;
};

// A long. Read: `fallback` when missing or malformed, or the message refused without one; a
// value below `min` refuses it.
struct Long {
  bool required = false;
  long fallback = 0;
  long min = std::numeric_limits<long>::min();
  std::string write(long value) const;
  bool read(const std::string* sent, long& value) const;
};

// "1" or "0"; anything but "1" reads as false.
struct Flag {
  std::string write(bool value) const;
  bool read(const std::string* sent, bool& value) const;
};

// Where a text over its bound is cut: in the middle, saying how much ("…(N bytes cut)…",
// message_bounds.h), or at its end, silently (a short word).
enum class Cut { Middle, End };

enum class Shown { Line, Lines, Entry };

// Free text. Written cut to `max_bytes` (0: only the message's own bound), as `fallback` when
// empty and `empty_as_fallback`; read as `fallback` when missing, made printable as `Shown`,
// cut to `max_bytes` again when `cut_when_read` (a peer's text kept to the bound it promised).
template <Shown How>
struct ShownText {
  std::string_view fallback = "";
  std::size_t max_bytes = 0;
  Cut cut = Cut::Middle;
  bool cut_when_read = false;
  bool empty_as_fallback = false;
  std::string write(const std::string& value) const;
  bool read(const std::string* sent, std::string& value) const;
};
using Text = ShownText<Shown::Line>;
using Lines = ShownText<Shown::Lines>;
using Entry = ShownText<Shown::Entry>;
extern template struct ShownText<Shown::Line>;
extern template struct ShownText<Shown::Lines>;
extern template struct ShownText<Shown::Entry>;

// A line typed for a rank's debugger, passed to it as typed (never printed): written as its
// first line, cut to `max_bytes`; a line with a line break in it would be a second command and
// refuses the message.
struct TypedLine {
  std::size_t max_bytes = 0;
  std::string write(const std::string& value) const;
  bool read(const std::string* sent, std::string& value) const;
};

// A run's nonce (rendezvous/token_proof.h): anything else reads as "" (no run).
struct RunNonce {
  std::string write(const std::string& value) const;
  bool read(const std::string* sent, std::string& value) const;
};

}  // namespace ddplaunch::messages
