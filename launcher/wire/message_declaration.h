// A launcher message declared once. WireFields<Payload> names the message's kind and lists its
// fields, each once: its name on the wire, the member it holds, and the codec that writes it,
// bounds it and reads it back made printable (field_codecs.h):
//
//   template <> struct WireFields<Stop> {
//     static constexpr Kind kind = Kind::Stop;
//     template <class Io, class Self> static void list(Io& io, Self& p) {
//       io("reason", p.reason, Entry{});
//       io("exit_code", p.exit_code, Int{.fallback = 1});
//     }
//   };
//
// encode() and decode() walk that one list (Self is `const Payload` while writing), so what is
// written and what is read cannot drift apart. A record inside a message (a rank's stack)
// lists its fields the same way, without a kind; io.each() writes a list of them as numbered
// fields ("rank.0", "rank.1", ...) after their count.
#pragma once

#include <algorithm>
#include <concepts>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/types.h"
#include "wire/field_codecs.h"
#include "wire/message_kind.h"

namespace ddplaunch::messages {

template <class Record>
struct WireFields;  // specialised beside every message record (debug_messages.h, node_messages.h, ...)

template <class Payload>
concept LauncherMessage = requires {
  { WireFields<Payload>::kind } -> std::convertible_to<Kind>;
};

// The message of `kind` made of `fields`, trimmed to the frame's bounds (message_bounds.h):
// whatever a payload holds, the message stays under the rendezvous frame limit.
rendezvous::Message make_message(Kind kind, Generation generation, std::map<std::string, std::string> fields);

// Writes a declaration's fields; `suffix` numbers the fields of one record in a list.
class FieldWriter {
 public:
  explicit FieldWriter(std::map<std::string, std::string>& fields, std::string suffix = "")
      : fields_(fields), suffix_(std::move(suffix)) {}

  template <class Value, class Codec>
  void operator()(std::string_view name, const Value& value, const Codec& codec) {
    fields_[std::string(name) + suffix_] = codec.write(value);
  }
  template <class Record>
  void each(std::string_view count_name, const std::vector<Record>& records, std::size_t max_records) {
    const std::size_t count = std::min(records.size(), max_records);
    fields_[std::string(count_name) + suffix_] = std::to_string(count);
    for (std::size_t i = 0; i < count; ++i) {
      FieldWriter record(fields_, suffix_ + "." + std::to_string(i));
      WireFields<Record>::list(record, records[i]);
    }
  }

 private:
  std::map<std::string, std::string>& fields_;
  std::string suffix_;
};

// Reads a declaration's fields from a message another launcher sent; the first field that
// refuses the message ends the reading.
class FieldReader {
 public:
  explicit FieldReader(const rendezvous::Message& message, std::string suffix = "")
      : message_(message), suffix_(std::move(suffix)) {}

  template <class Value, class Codec>
  void operator()(std::string_view name, Value& value, const Codec& codec) {
    if (refused_) return;
    const auto found = message_.fields.find(std::string(name) + suffix_);
    refused_ = !codec.read(found == message_.fields.end() ? nullptr : &found->second, value);
  }
  // A count over `max_records`, below zero or missing refuses the message, as does any record.
  template <class Record>
  void each(std::string_view count_name, std::vector<Record>& records, std::size_t max_records) {
    long count = 0;
    (*this)(count_name, count, Long{.required = true, .min = 0});
    if (refused_ || static_cast<std::size_t>(count) > max_records) {
      refused_ = true;
      return;
    }
    for (long i = 0; i < count && !refused_; ++i) {
      FieldReader reader(message_, suffix_ + "." + std::to_string(i));
      Record record{};
      WireFields<Record>::list(reader, record);
      refused_ = reader.refused();
      records.push_back(std::move(record));
    }
  }
  bool refused() const { return refused_; }

 private:
  const rendezvous::Message& message_;
  std::string suffix_;
  bool refused_ = false;
};

template <LauncherMessage Payload>
rendezvous::Message encode(Generation generation, const Payload& payload) {
  std::map<std::string, std::string> fields;
  FieldWriter writer(fields);
  WireFields<Payload>::list(writer, payload);
  return make_message(WireFields<Payload>::kind, generation, std::move(fields));
}

// nullopt when the message is of another kind or a field refuses it.
template <LauncherMessage Payload>
std::optional<Payload> decode(const rendezvous::Message& message) {
  if (kind_of(message) != WireFields<Payload>::kind) return std::nullopt;
  Payload payload{};
  FieldReader reader(message);
  WireFields<Payload>::list(reader, payload);
  if (reader.refused()) return std::nullopt;
  return payload;
}

}  // namespace ddplaunch::messages
