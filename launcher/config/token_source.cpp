// Token file checks and argv scrubbing.
#include "config/token_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace ddplaunch {

namespace {
constexpr std::size_t kMaxTokenFileBytes = 4096;

// Hides what follows `prefix` in `arg` (the value of --token=V, token=V), in place.
bool scrub_after(char* arg, std::string_view prefix) {
  if (std::strncmp(arg, prefix.data(), prefix.size()) != 0) return false;
  char* value = arg + prefix.size();
  std::memset(value, '*', std::strlen(value));
  return true;
}
}  // namespace

// A secret's file, checked; `first_line_only`: what follows the first newline is not part of it.
static TokenFromFile read_secret_file(const std::string& path, const std::string& label, const std::string& what,
                               bool first_line_only) {
  auto refuse = [&](std::string why) { return TokenFromFile{{}, fmt::format("{} {}: {}", label, path, why)}; };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return refuse(fmt::format("cannot open it: {}", std::strerror(errno)));
  struct stat info {};
  const bool statted = fstat(fd, &info) == 0;
  std::string text;
  std::string why;
  if (!statted) why = fmt::format("cannot stat it: {}", std::strerror(errno));
  else if (!S_ISREG(info.st_mode)) why = fmt::format("not a regular file; put {} in a file of its own", what);
  else if (info.st_uid != geteuid())
    why = fmt::format("owned by uid {}, not by you (uid {}); a file of {} must be your own", info.st_uid, geteuid(),
                      what);
  else if ((info.st_mode & 077) != 0)
    why = fmt::format("mode {:04o} lets others read or change it; run chmod 600 {}", info.st_mode & 07777, path);
  else if (info.st_size > static_cast<off_t>(kMaxTokenFileBytes))
    why = fmt::format("{} bytes is too long for {} (at most {})", info.st_size, what, kMaxTokenFileBytes);
  if (why.empty()) {
    char buffer[kMaxTokenFileBytes + 1];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) why = fmt::format("cannot read it: {}", std::strerror(errno));
    else text.assign(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  if (!why.empty()) return refuse(why);
  if (first_line_only) text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return refuse(fmt::format("it is empty; write {} into it (the same on every node)", what));
  return TokenFromFile{std::move(text), {}};
}

TokenFromFile read_token_file(const std::string& path) {
  return read_secret_file(path, "--token-file", "the shared secret", false);
}

TokenFromFile read_secret_first_line(const std::string& path, const std::string& label, const std::string& what) {
  return read_secret_file(path, label, what, true);
}

void scrub_token_arguments(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return;  // the program's own arguments
    if (scrub_after(argv[i], "--token=") || scrub_after(argv[i], "--set=token=")) continue;
    const bool next_is_value = arg == "--token" || arg == "--set";
    if (!next_is_value || i + 1 >= argc) continue;
    ++i;
    if (arg == "--token") scrub_after(argv[i], "");
    else scrub_after(argv[i], "token=");
  }
}

void scrub_secret_environment() {
  for (char** entry = environ; entry && *entry; ++entry)
    for (const char* name : kSecretVariables)
      if (scrub_after(*entry, std::string(name) + "=")) break;
}

std::string token_weakness(const std::string& token) {
  constexpr std::size_t kMinLength = 16, kMinDistinct = 8;
  if (token.empty()) return {};
  const std::size_t distinct = std::set<char>(token.begin(), token.end()).size();
  std::string why = token.size() < kMinLength ? fmt::format("only {} characters", token.size())
                    : distinct < kMinDistinct ? fmt::format("only {} different characters", distinct)
                                              : std::string();
  if (why.empty()) return {};
  return fmt::format("the rendezvous token is weak ({}): anyone who reaches the rendezvous port can guess it; use 16 "
                     "or more random characters, e.g. DDPLAUNCH_TOKEN=$(openssl rand -hex 16) on every node "
                     "(ddplaunch-srun makes one for you)",
                     why);
}

}  // namespace ddplaunch
