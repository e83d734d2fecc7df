// The peer probe's hello and answer lines; see probe_wire.h.
#include "probe_wire.h"

#include <sys/random.h>

#include <cerrno>
#include <sstream>
#include <vector>

namespace ddplaunch::preflight::probe_wire {
namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Labels keep a hello's MAC from ever passing as an answer's, and the reverse. The hello does
// not name the listener: one of the job's own listeners reached by mistake (docker0's address
// on every host) answers, and its id tells the prober so.
std::string hello_message(const std::string& mode, const std::string& nonce) {
  return "ddplaunch-probe-hello-v1\n" + mode + "\n" + nonce;
}
std::string seen_message(const std::string& seen_as, const std::string& listener_id, const std::string& nonce) {
  return "ddplaunch-probe-seen-v1\n" + nonce + "\n" + seen_as + "\n" + listener_id;
}

}  // namespace

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  for (std::size_t got = 0; got < raw.size();) {
    ssize_t n = ::getrandom(raw.data() + got, raw.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // left as is: an identity, and a nonce only needs to be fresh
    got += static_cast<std::size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) out += hex[b >> 4], out += hex[b & 15];
  return out;
}

std::string hello_line(bool bulk, const std::string& nonce, const ProbeAuth& auth) {
  const std::string mode = bulk ? "bulk" : "echo";
  if (!auth.enabled()) return "DDPLPROBE1 " + mode + "\n";
  return "DDPLPROBE1 " + mode + " " + nonce + " " + auth.mac(hello_message(mode, nonce)) + "\n";
}

std::optional<Hello> read_hello(const std::string& line, const ProbeAuth& auth) {
  auto w = words(line);
  if (w.size() < 2 || w[0] != "DDPLPROBE1" || (w[1] != "echo" && w[1] != "bulk")) return std::nullopt;
  Hello hello{w[1] == "bulk", ""};
  if (!auth.enabled()) return w.size() == 2 ? std::optional<Hello>(hello) : std::nullopt;
  if (w.size() != 4 || w[2].size() < 16 || !auth.same(w[3], auth.mac(hello_message(w[1], w[2]))))
    return std::nullopt;
  hello.nonce = w[2];
  return hello;
}

std::string seen_line(const std::string& seen_as, const std::string& listener_id, const std::string& nonce,
                      const ProbeAuth& auth) {
  std::string line = "SEEN " + seen_as + " " + listener_id;
  if (auth.enabled()) line += " " + auth.mac(seen_message(seen_as, listener_id, nonce));
  return line + "\n";
}

std::optional<Seen> read_seen(const std::string& line, const std::string& nonce, const ProbeAuth& auth,
                              std::string& error) {
  auto w = words(line);
  if (w.size() < 2 || w[0] != "SEEN") {
    error = "connected, but no probe answer within 2 s (not a ddplaunch probe listener?)";
    return std::nullopt;
  }
  Seen seen{w[1], w.size() > 2 ? w[2] : ""};
  if (auth.enabled() &&
      (w.size() != 4 || !auth.same(w[3], auth.mac(seen_message(seen.seen_as, seen.listener_id, nonce))))) {
    error = "the listener could not prove the rendezvous token: it is not this job's node, or its token differs";
    return std::nullopt;
  }
  return seen;
}

}  // namespace ddplaunch::preflight::probe_wire
