// Wire framing: encode/decode of the text body and the incremental length-prefixed reader.
// Decoding is strict and total: every malformed input yields an error string, never a crash.
#include "ddplaunch/rendezvous/codec.h"

#include <charconv>

namespace ddplaunch::rendezvous {

std::string escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_escaped(out, s);
  return out;
}

// Straight into `out`: encoding a frame makes no string per key or value.
void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '=': out += "\\e"; break;
      default: out += c;
    }
  }
}

std::optional<std::string> unescape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '=' || c == '\n') return std::nullopt;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == s.size()) return std::nullopt;
    switch (s[i]) {
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 'e': out += '='; break;
      default: return std::nullopt;
    }
  }
  return out;
}

void append_field_line(std::string& out, std::string_view key, std::string_view value) {
  append_escaped(out, key);
  out += '=';
  append_escaped(out, value);
  out += '\n';
}

std::string encode_body(const Frame& frame, std::string_view raw_tail) {
  std::string body;
  append_body(body, frame, raw_tail);
  return body;
}

void append_body(std::string& out, const Frame& frame, std::string_view raw_tail) {
  // Room for the unescaped text, the generation and the separators: one allocation at most
  // (escapes are rare).
  std::size_t size = frame.kind.size() + frame.job_id.size() + frame.subtype.size() + raw_tail.size() + 32;
  for (const auto& [k, v] : frame.fields) size += k.size() + v.size() + 2;
  out.reserve(out.size() + size);
  append_escaped(out, frame.kind);
  out += '\n';
  append_escaped(out, frame.job_id);
  out += '\n';
  out += to_string(frame.generation);
  out += '\n';
  append_escaped(out, frame.subtype);
  out += '\n';
  for (const auto& [k, v] : frame.fields) append_field_line(out, k, v);
  out += raw_tail;
}

std::string encode_frame(const Frame& frame, std::string_view raw_tail) {
  return length_prefixed(encode_body(frame, raw_tail));
}

std::string length_prefixed(std::string_view body) {
  std::uint32_t n = static_cast<std::uint32_t>(body.size());
  std::string out;
  out.reserve(4 + body.size());
  out += static_cast<char>((n >> 24) & 0xff);
  out += static_cast<char>((n >> 16) & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  out += body;
  return out;
}

std::optional<Frame> decode_body(std::string_view body, std::string& error) {
  if (body.empty() || body.back() != '\n') {
    error = "message body does not end with a newline";
    return std::nullopt;
  }
  Frame f;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < body.size()) {
    std::size_t end = body.find('\n', pos);  // exists: body ends with '\n'
    std::string_view line = body.substr(pos, end - pos);
    pos = end + 1;
    if (line_no < 4) {
      if (line_no == 2) {
        const auto generation = parse_generation(line);
        if (!generation) {
          error = "generation is not a number";
          return std::nullopt;
        }
        f.generation = *generation;
      } else {
        auto text = unescape_text(line);
        if (!text) {
          error = "bad escape in message header line " + std::to_string(line_no + 1);
          return std::nullopt;
        }
        (line_no == 0 ? f.kind : line_no == 1 ? f.job_id : f.subtype) = std::move(*text);
      }
      ++line_no;
      continue;
    }
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      error = "field line without '='";
      return std::nullopt;
    }
    auto key = unescape_text(line.substr(0, eq));
    auto value = unescape_text(line.substr(eq + 1));
    if (!key || !value || key->empty()) {
      error = "malformed field line";
      return std::nullopt;
    }
    if (!f.fields.emplace(std::move(*key), std::move(*value)).second) {
      error = "duplicate field";
      return std::nullopt;
    }
  }
  if (line_no < 4) {
    error = "message header is incomplete";
    return std::nullopt;
  }
  if (f.kind.empty()) {
    error = "message has no kind";
    return std::nullopt;
  }
  return f;
}

void FrameReader::append(const char* data, std::size_t n) {
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  buffer_.append(data, n);
}

FrameReader::Status FrameReader::next_body(std::string_view& body, std::string& error) {
  if (failed_) {
    error = "stream already failed";
    return Status::kError;
  }
  // Compact once consumed data dominates, so a long stream does not grow the buffer (here,
  // before a new view: the last one is no longer in use).
  if (offset_ > 65536 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  std::size_t avail = buffer_.size() - offset_;
  if (avail < 4) return Status::kNeedMore;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  std::uint32_t n = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                    (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
  if (n > max_frame_bytes_) {
    failed_ = true;
    error = "message of " + std::to_string(n) + " bytes exceeds the limit of " +
            std::to_string(max_frame_bytes_) + " bytes";
    if (frames_read_ == 0 && looks_like_c10d_store_client(std::string_view(buffer_).substr(offset_)))
      error = std::string(kForeignStoreClient) + " (" + error + ")";
    return Status::kError;
  }
  if (avail - 4 < n) return Status::kNeedMore;
  body = std::string_view(buffer_.data() + offset_ + 4, n);
  offset_ += 4 + n;
  ++frames_read_;
  return Status::kFrame;
}

FrameReader::Status FrameReader::next(Frame& out, std::string& error) {
  std::string_view body;
  Status status = next_body(body, error);
  if (status != Status::kFrame) return status;
  auto frame = decode_body(body, error);
  if (!frame) {
    failed_ = true;
    error = "malformed message: " + error;
    return Status::kError;
  }
  out = std::move(*frame);
  return Status::kFrame;
}

// torch's TCPStore client speaks first: one query-type byte, then (torch >= 2) the uint32
// validation magic 0x3C85F7CE, or (torch 1.x) a little-endian uint64 key length and the key
// of its first `add`. Our frames start with a big-endian length far below these values.
bool looks_like_c10d_store_client(std::string_view head) {
  if (head.size() < 5) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(head.data());
  if (p[0] > 0x20) return false;  // a query type
  if (p[1] == 0xCE && p[2] == 0xF7 && p[3] == 0x85 && p[4] == 0x3C) return true;
  if (head.size() < 9) return false;
  std::uint64_t key_length = 0;
  for (int i = 8; i >= 1; --i) key_length = (key_length << 8) | p[i];
  return key_length > 0 && key_length <= 4096;
}

}  // namespace ddplaunch::rendezvous
