// Reading torch's error files: a small bounded JSON reader (depth, size) for the few fields
// @record writes, and the summary of its Python traceback.
#include "env/error_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ddplaunch/rendezvous/generation_format.h"

namespace ddplaunch {

namespace {

// A JSON value with only what the summary needs: strings, objects; everything else is kept
// as "other" (numbers, literals, arrays are checked for syntax and dropped).
struct JsonValue {
  enum class Kind { String, Object, Other } kind = Kind::Other;
  std::string text;
  std::map<std::string, std::unique_ptr<JsonValue>> members;
  const JsonValue* member(const std::string& name) const {
    auto it = members.find(name);
    return it == members.end() ? nullptr : it->second.get();
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}
  std::unique_ptr<JsonValue> document() {
    auto v = value(0);
    skip_space();
    return v && pos_ == s_.size() ? std::move(v) : nullptr;
  }
  // A string starting at the current position; with `lenient`, the end of the input ends it.
  std::optional<std::string> string(bool lenient = false) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return std::nullopt;
    ++pos_;
    std::string out;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return lenient ? std::optional(out) : std::nullopt;
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            char h = s_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
            else return std::nullopt;
          }
          // UTF-8 of the BMP code point; surrogate halves become '?' (summary text only).
          if (code < 0x80) out.push_back(static_cast<char>(code));
          else if (code < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (code >> 6)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else if (code >= 0xD800 && code <= 0xDFFF) {
            out.push_back('?');
          } else {
            out.push_back(static_cast<char>(0xE0 | (code >> 12)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: out.push_back(e);  // \" \\ \/
      }
    }
    return lenient ? std::optional(out) : std::nullopt;
  }
  std::size_t find(std::string_view needle, std::size_t from) const { return s_.find(needle, from); }
  void seek(std::size_t pos) { pos_ = pos; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }

 private:
  static constexpr int kMaxDepth = 32;

  std::unique_ptr<JsonValue> value(int depth) {
    if (depth > kMaxDepth) return nullptr;
    skip_space();
    if (pos_ >= s_.size()) return nullptr;
    auto v = std::make_unique<JsonValue>();
    char c = s_[pos_];
    if (c == '"') {
      auto text = string();
      if (!text) return nullptr;
      v->kind = JsonValue::Kind::String;
      v->text = std::move(*text);
      return v;
    }
    if (c == '{' || c == '[') {
      const bool object = c == '{';
      const char close = object ? '}' : ']';
      ++pos_;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == close) {
        ++pos_;
        if (object) v->kind = JsonValue::Kind::Object;
        return v;
      }
      while (true) {
        std::string key;
        if (object) {
          skip_space();
          auto k = string();
          if (!k) return nullptr;
          key = std::move(*k);
          skip_space();
          if (pos_ >= s_.size() || s_[pos_++] != ':') return nullptr;
        }
        auto member = value(depth + 1);
        if (!member) return nullptr;
        if (object) v->members[key] = std::move(member);
        skip_space();
        if (pos_ >= s_.size()) return nullptr;
        char sep = s_[pos_++];
        if (sep == close) break;
        if (sep != ',') return nullptr;
      }
      if (object) v->kind = JsonValue::Kind::Object;
      return v;
    }
    // number, true, false, null: a run of their characters
    std::size_t start = pos_;
    while (pos_ < s_.size() && std::string_view("0123456789+-.eEtruefalsn").find(s_[pos_]) != std::string_view::npos)
      ++pos_;
    return pos_ > start ? std::move(v) : nullptr;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

// At most `limit` bytes of the file; nullopt when it cannot be opened or read.
std::optional<std::string> read_prefix(const std::string& path, std::size_t limit, bool& truncated) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block us
  if (fd < 0) return std::nullopt;
  std::string data(limit + 1, '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  truncated = got > limit;
  data.resize(std::min(got, limit));
  return data;
}

std::string first_line_cut(std::string_view text, std::size_t limit) {
  // The message may span lines (chained errors): keep it whole up to the limit, lines joined.
  std::string out;
  for (char c : text) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    out.push_back(c == '\n' ? ' ' : c == '\r' ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The last `count` frames of a Python traceback: each `File "...", line N, in f` line with
// the source line under it, when there is one.
std::vector<std::string> last_frames(std::string_view callstack, std::size_t count) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < callstack.size()) {
    std::size_t end = callstack.find('\n', start);
    if (end == std::string_view::npos) end = callstack.size();
    lines.push_back(callstack.substr(start, end - start));
    start = end + 1;
  }
  std::vector<std::string> frames;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    const auto at = l.find("File \"");
    if (at == std::string_view::npos || l.substr(0, at).find_first_not_of(' ') != std::string_view::npos) continue;
    std::string frame = "  " + std::string(l.substr(at, 300));
    if (i + 1 < lines.size()) {
      std::string_view next = lines[i + 1];
      auto code = next.find_first_not_of(' ');
      if (code != std::string_view::npos && code >= 4 && next.substr(code).rfind("File \"", 0) != 0 &&
          next.substr(code).rfind("^", 0) != 0)
        frame += "\n    " + std::string(next.substr(code, 200));
    }
    frames.push_back(std::move(frame));
  }
  if (frames.size() > count) frames.erase(frames.begin(), frames.end() - static_cast<std::ptrdiff_t>(count));
  return frames;
}

}  // namespace

std::string error_file_path(const std::string& dir, int global_rank, Generation generation) {
  return fmt::format("{}/error-rank{}-gen{}.json", dir, global_rank, generation);
}

std::optional<std::string> summarize_error_file(const std::string& path) {
  bool truncated = false;
  auto data = read_prefix(path, kMaxErrorFileRead, truncated);
  if (!data || data->empty()) return std::nullopt;
  std::string message, callstack;
  JsonReader reader(*data);
  auto doc = truncated ? nullptr : reader.document();
  if (doc) {
    const JsonValue* m = doc->member("message");
    if (!m) return std::nullopt;
    if (m->kind == JsonValue::Kind::String) {
      message = m->text;
    } else if (m->kind == JsonValue::Kind::Object) {
      const JsonValue* text = m->member("message");
      if (!text || text->kind != JsonValue::Kind::String) return std::nullopt;
      message = text->text;
      if (const JsonValue* extra = m->member("extraInfo"))
        if (const JsonValue* stack = extra->member("py_callstack"); stack && stack->kind == JsonValue::Kind::String)
          callstack = stack->text;
    } else {
      return std::nullopt;
    }
  } else if (truncated) {
    // Cut off at the read limit: the innermost "message": "..." string, read up to the cut.
    std::size_t at = data->find("\"message\"");
    std::optional<std::string> text;
    while (at != std::string::npos && !text) {
      reader.seek(at + 9);
      reader.skip_space();
      std::size_t colon = data->find(':', at + 9);
      if (colon == std::string::npos) break;
      reader.seek(colon + 1);
      reader.skip_space();
      text = reader.string(true);
      at = data->find("\"message\"", at + 9);
    }
    if (!text || text->empty()) return std::nullopt;
    message = *text + " [error file cut at " + std::to_string(kMaxErrorFileRead / 1024) + " KiB]";
  } else {
    return std::nullopt;
  }
  if (message.empty() && callstack.empty()) return std::nullopt;
  std::string summary = first_line_cut(message, 500);
  for (const auto& frame : last_frames(callstack, kErrorSummaryFrames)) summary += "\n" + frame;
  return summary;
}

}  // namespace ddplaunch
