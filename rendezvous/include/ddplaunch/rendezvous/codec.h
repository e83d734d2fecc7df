// Wire framing: 4-byte big-endian length prefix + a text body, and the incremental reader.
// Body: four header lines (kind, job id, generation, subtype) then `key=value` lines; '\', '\n'
// and '=' are escaped in every string. Decoding returns an error for anything malformed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch::rendezvous {

struct Frame {
  std::string kind;     // protocol kind: hello, join, assign, msg, hb, ...
  std::string job_id;   // every frame carries the job id ...
  Generation generation;         // ... and the generation
  std::string subtype;  // for kind "msg": the launcher's message type
  std::map<std::string, std::string> fields;
};

// Escapes '\\', '\n' and '=' so that a value fits on one `key=value` line.
std::string escape_text(std::string_view s);
void append_escaped(std::string& out, std::string_view s);  // escape_text(s), appended to `out`
std::optional<std::string> unescape_text(std::string_view s);

// Body only (no length prefix). `raw_tail` is appended verbatim: already-encoded `key=value\n`
// lines shared by many frames (the node list), encoded once instead of once per node.
std::string encode_body(const Frame& frame, std::string_view raw_tail = {});
// The same, appended to `out` (a connection's write queue: no string of its own per frame).
void append_body(std::string& out, const Frame& frame, std::string_view raw_tail = {});
// Length prefix + body.
std::string encode_frame(const Frame& frame, std::string_view raw_tail = {});
std::string length_prefixed(std::string_view body);
// Never throws on garbage: returns nullopt and says what was wrong.
std::optional<Frame> decode_body(std::string_view body, std::string& error);
// One `key=value\n` line, escaped.
void append_field_line(std::string& out, std::string_view key, std::string_view value);

// A program's c10d TCPStore client reached a ddplaunch port: how the first bytes read
// (see FrameReader::next's error), and the test behind it.
inline constexpr const char* kForeignStoreClient =
    "speaks torch's c10d TCPStore protocol, not ddplaunch's: a worker's init_method or TCPStore names the "
    "launcher's rendezvous port, not MASTER_ADDR:MASTER_PORT where rank 0 hosts the store";
bool looks_like_c10d_store_client(std::string_view first_bytes);

// Accumulates bytes from a socket and yields complete frames.
class FrameReader {
 public:
  enum class Status { kNeedMore, kFrame, kError };
  explicit FrameReader(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}
  void append(const char* data, std::size_t n);
  // kFrame: `out` holds the next frame. kError: `error` says why (oversize, malformed); the
  // stream is unusable afterwards.
  Status next(Frame& out, std::string& error);
  // The same, undecoded: `body` views the next frame's body, valid until the next call or
  // append (for a connection that checks each body's MAC before decoding it).
  Status next_body(std::string_view& body, std::string& error);
  std::size_t buffered() const { return buffer_.size() - offset_; }
  // Changes the largest frame accepted from now on (a peer gets more room once it is trusted).
  void set_limit(std::size_t max_frame_bytes) { max_frame_bytes_ = max_frame_bytes; }

 private:
  std::size_t max_frame_bytes_;
  std::size_t frames_read_ = 0;
  std::string buffer_;
  std::size_t offset_ = 0;
  bool failed_ = false;
};

}  // namespace ddplaunch::rendezvous
