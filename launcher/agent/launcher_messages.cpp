// Encoding of launcher messages into rendezvous::Message fields.
#include "agent/launcher_messages.h"

#include <charconv>
#include <sstream>

namespace ddplaunch::messages {

rendezvous::Message make_message(const char* type, long generation,
                                 std::vector<std::pair<std::string, std::string>> fields) {
  rendezvous::Message m;
  m.type = type;
  m.generation = static_cast<std::uint64_t>(generation);
  for (auto& [k, v] : fields) m.fields[k] = std::move(v);
  return m;
}

std::string field(const rendezvous::Message& message, const std::string& key, const std::string& fallback) {
  auto it = message.fields.find(key);
  return it == message.fields.end() ? fallback : it->second;
}

int int_field(const rendezvous::Message& message, const std::string& key, int fallback) {
  std::string text = field(message, key);
  int value = fallback;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && ptr == text.data() + text.size() ? value : fallback;
}

rendezvous::Message encode_failure(long generation, const WorkerFailure& f, const std::string& host) {
  std::string tail;
  for (const auto& line : f.tail) tail += line + "\n";
  auto m = make_message(kWorkerFailed, generation,
                        {{"node", std::to_string(f.node_rank)},
                         {"host", host},
                         {"rank", std::to_string(f.global_rank)},
                         {"local_rank", std::to_string(f.local_rank)},
                         {"pid", std::to_string(f.pid)},
                         {"phase", f.phase == FailurePhase::Init ? "init" : "runtime"},
                         {"kind", f.kind},
                         {"detail", f.detail},
                         {"tail", tail}});
  if (f.status) {
    m.fields["signaled"] = f.status->signaled ? "1" : "0";
    m.fields["code"] = std::to_string(f.status->code);
    m.fields["signal"] = std::to_string(f.status->signal);
  }
  return m;
}

std::optional<FailureReport> decode_failure(const rendezvous::Message& m) {
  if (m.type != kWorkerFailed) return std::nullopt;
  FailureReport r;
  r.host = field(m, "host", "?");
  WorkerFailure& f = r.failure;
  f.node_rank = int_field(m, "node", -1);
  f.global_rank = int_field(m, "rank", -1);
  f.local_rank = int_field(m, "local_rank", -1);
  f.pid = int_field(m, "pid", 0);
  f.phase = field(m, "phase") == "runtime" ? FailurePhase::Runtime : FailurePhase::Init;
  f.kind = field(m, "kind", "exited");
  f.detail = field(m, "detail");
  if (m.fields.count("code")) {
    ExitStatus s;
    s.signaled = field(m, "signaled") == "1";
    s.code = int_field(m, "code", 1);
    s.signal = int_field(m, "signal", 0);
    f.status = s;
  }
  std::istringstream tail(field(m, "tail"));
  for (std::string line; std::getline(tail, line);) f.tail.push_back(line);
  return r;
}

std::string worker_state_name(const Worker& w) {
  if (w.status) return w.status->signaled ? "killed:" + signal_name(w.status->signal) : "exited:" + std::to_string(w.status->code);
  if (w.paused) return "paused";
  switch (w.init) {
    case InitState::Pending: return "starting";
    case InitState::Begun: return "init";
    case InitState::Initialized: return "running";
    case InitState::Failed: return "failed";
  }
  return "unknown";
}

rendezvous::Message encode_node_finished(long generation, int exit_code, const std::string& summary) {
  return make_message(kNodeFinished, generation, {{"exit_code", std::to_string(exit_code)}, {"summary", summary}});
}

}  // namespace ddplaunch::messages
