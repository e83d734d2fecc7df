// libFuzzer target for what a stranger's bytes reach before it has joined: the length-prefixed
// reader (with the pre-join limit), the frame decoder, the typed field readers and the log
// escaping. Optional (clang only): see tests/fuzz/CMakeLists.txt. CI runs the bounded
// random-mutation test in tests/unit/rendezvous/fuzz_test.cpp instead.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../rendezvous/src/wire.h"
#include "ddplaunch/rendezvous/codec.h"
#include "ddplaunch/rendezvous/printable.h"

using namespace ddplaunch::rendezvous;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the read size, as a socket would split the stream.
  const std::size_t chunk = 1 + data[0] * 37u;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const std::size_t n = size - 1;
  FrameReader reader(16 << 10);
  for (std::size_t at = 0; at < n;) {
    std::size_t take = std::min(chunk, n - at);
    reader.append(bytes + at, take);
    at += take;
    Frame frame;
    std::string error;
    for (;;) {
      auto status = reader.next(frame, error);
      if (status == FrameReader::Status::kNeedMore) {
        if (reader.buffered() >= (16u << 10) + 4) __builtin_trap();  // holds more than one frame
        break;
      }
      if (status == FrameReader::Status::kError) return 0;
      NodeFacts facts;
      Assignment assignment;
      detail::get_facts(frame.fields, "f.", facts, error);
      if (detail::get_assignment(frame, assignment, error) && assignment.nodes.size() > frame.fields.size())
        __builtin_trap();
      auto again = decode_body(encode_body(frame), error);
      if (!again || again->fields != frame.fields || again->kind != frame.kind) __builtin_trap();
    }
  }
  printable(std::string_view(bytes, n));
  return 0;
}
