// torch's error-file JSON for the outer agent: {"message": {"message": ..., "extraInfo":
// {"py_callstack": ..., "timestamp": ...}, "errorCode": N}}.
#include "supervise/outer_error_file.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "env/error_file.h"

namespace ddplaunch {

namespace {

// The rank's own error file, when it is torch's JSON with a "message" object: that object
// gets the exit code, as torch's dump_error_file does (a rank killed by a signal cannot
// write its own code). nullopt when absent or not such JSON.
std::optional<nlohmann::json> child_error(const std::string& path, int exit_code) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  text.resize(kMaxErrorFileRead);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("message")) return std::nullopt;
  if (doc["message"].is_object() && exit_code != 0) doc["message"]["errorCode"] = exit_code;
  return doc;
}

}  // namespace

std::string write_outer_error_file(const std::string& path, const OuterFailure& f) {
  nlohmann::json doc;
  if (auto child = child_error(f.child_error_file, f.exit_code)) {
    doc = std::move(*child);
  } else {
    doc["message"]["message"] = f.message;
    doc["message"]["extraInfo"]["py_callstack"] = f.details;
    doc["message"]["extraInfo"]["timestamp"] = std::to_string(static_cast<long long>(std::time(nullptr)));
    doc["message"]["errorCode"] = f.exit_code;
  }
  // A peer's text may hold any bytes: replace what is not UTF-8 rather than fail.
  const std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string temporary = path + ".ddplaunch-tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + temporary;
    out << text;
    if (!out.flush()) return "cannot write " + temporary;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return "cannot replace " + path;
  }
  return "";
}

}  // namespace ddplaunch
