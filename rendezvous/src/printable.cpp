// Escaping peer text for logs: C0/C1 controls and invalid UTF-8 become visible escapes.
#include "ddplaunch/rendezvous/printable.h"

#include <algorithm>

#include <cstdio>

namespace ddplaunch::rendezvous {
namespace {

void append_hex(std::string& out, const char* prefix, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%02x", prefix, value);
  out += buf;
}

// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char lead = byte(i);
  std::size_t n = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 0;
  if (n == 0 || lead > 0xf4 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  unsigned second = byte(i + 1);
  if (lead == 0xe0 && second < 0xa0) return 0;   // overlong
  if (lead == 0xed && second >= 0xa0) return 0;  // UTF-16 surrogates
  if (lead == 0xf0 && second < 0x90) return 0;   // overlong
  if (lead == 0xf4 && second >= 0x90) return 0;  // above U+10FFFF
  return n;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
    } else if (std::size_t n = utf8_sequence_length(text, i); n > 0) {
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
    } else if (c < 0x80) {  // other C0 controls, ESC, DEL
      append_hex(out, "\\x", c);
      ++i;
    } else if (std::size_t n = utf8_sequence_length(text, i); n == 0) {
      append_hex(out, "\\x", c);
      ++i;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      append_hex(out, "\\u00", static_cast<unsigned char>(text[i + 1]));  // C1 control
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += printable(text.substr(start, end - start));
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace ddplaunch::rendezvous
