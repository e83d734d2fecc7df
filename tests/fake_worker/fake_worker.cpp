// fake_worker: the stand-in training program for every integration test. It prints its
// environment, reports init through the shim, fails or hangs init on a chosen generation,
// floods output, ignores SIGTERM, leaves a grandchild, sleeps, hangs, exits N or dies by S.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "ddplaunch/shim.h"

extern char** environ;

namespace {

namespace c = ddplaunch::contract;

constexpr const char* kUsage =
    "usage: fake_worker [flags]   (actions run in this order)\n"
    "  --ignore-sigterm            ignore SIGTERM from the start (also in the grandchild)\n"
    "  --print-env                 print 'ENV NAME=value' / 'ENV NAME unset' for the contract\n"
    "  --report-init               report init_begin then init_ok through the shim\n"
    "  --fail-init-on-gen G        on DDPLAUNCH_GENERATION G: init_begin, init_failed, exit 3\n"
    "                              (G = -1: on every generation)\n"
    "  --fail-init-after-ms MS     that failing init takes MS milliseconds first\n"
    "  --hang-init-on-gen G        on generation G: init_begin, then sleep forever\n"
    "  --fail-rank R               limit the two above to RANK R (default: every rank)\n"
    "  --lines N --line-bytes B    N stdout lines 'rank R line i xxx..' of B bytes (with the\n"
    "                              newline; longer if the prefix needs it), one write() each;\n"
    "                              every 10th line also writes 'rank R err i' to stderr\n"
    "  --fork-grandchild           fork a child sleeping forever; print GRANDCHILD_PID=<pid>\n"
    "  --sleep-ms MS               sleep MS milliseconds\n"
    "  --hang                      sleep forever\n"
    "  --signal S                  raise signal S (default action) at the end\n"
    "  --exit N                    exit code (default 0)\n";

struct Options {
  bool ignore_sigterm = false;
  bool print_env = false;
  bool report_init = false;
  std::optional<long> fail_init_gen;
  long fail_init_after_ms = 0;
  std::optional<long> hang_init_gen;
  std::optional<long> fail_rank;
  long lines = 0;
  long line_bytes = 0;
  bool fork_grandchild = false;
  long sleep_ms = 0;
  bool hang = false;
  std::optional<int> signal;
  int exit_code = 0;
};

bool parse_long(const char* s, long& out) {
  return s && c::detail::parse_int(std::string_view(s), out);
}

// Returns the options, or nullopt after printing what is wrong.
std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    auto number = [&](long& out) {
      if (i + 1 < argc && parse_long(argv[i + 1], out)) {
        ++i;
        return true;
      }
      std::fprintf(stderr, "fake_worker: %s needs an integer argument\n", argv[i]);
      return false;
    };
    long v = 0;
    if (flag == "--ignore-sigterm") o.ignore_sigterm = true;
    else if (flag == "--print-env") o.print_env = true;
    else if (flag == "--report-init") o.report_init = true;
    else if (flag == "--fork-grandchild") o.fork_grandchild = true;
    else if (flag == "--hang") o.hang = true;
    else if (flag == "--fail-init-on-gen") { if (!number(v)) return std::nullopt; o.fail_init_gen = v; }
    else if (flag == "--fail-init-after-ms") { if (!number(o.fail_init_after_ms)) return std::nullopt; }
    else if (flag == "--hang-init-on-gen") { if (!number(v)) return std::nullopt; o.hang_init_gen = v; }
    else if (flag == "--fail-rank") { if (!number(v)) return std::nullopt; o.fail_rank = v; }
    else if (flag == "--lines") { if (!number(o.lines)) return std::nullopt; }
    else if (flag == "--line-bytes") { if (!number(o.line_bytes)) return std::nullopt; }
    else if (flag == "--sleep-ms") { if (!number(o.sleep_ms)) return std::nullopt; }
    else if (flag == "--signal") { if (!number(v)) return std::nullopt; o.signal = static_cast<int>(v); }
    else if (flag == "--exit") { if (!number(v)) return std::nullopt; o.exit_code = static_cast<int>(v); }
    else {
      std::fprintf(stderr, "fake_worker: unknown flag '%s'\n%s", argv[i], kUsage);
      return std::nullopt;
    }
  }
  return o;
}

long env_long(const char* name, long fallback) {
  long v = 0;
  return parse_long(std::getenv(name), v) ? v : fallback;
}

// Writes all of `s` with as few write() calls as the kernel allows (one, normally).
void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Sleeping forever with pause(): any signal with a default action still ends the process.
[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

void sleep_ms(long ms) {
  timespec left{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void print_env() {
  static const char* const kNames[] = {
      c::kMasterAddr, c::kMasterPort, c::kRank, c::kLocalRank, c::kWorldSize,
      c::kLocalWorldSize, c::kGroupRank, c::kRoleRank, c::kRoleWorldSize, c::kRoleName,
      c::kRestartCount, c::kMaxRestarts, c::kRunId, c::kUseAgentStore, c::kOmpNumThreads,
      c::kNcclSocketIfname, c::kGlooSocketIfname};
  std::string out;
  for (const char* name : kNames) {
    const char* value = std::getenv(name);
    out += std::string("ENV ") + name + (value ? std::string("=") + value : " unset") + "\n";
  }
  // ddplaunch's own in a fixed order, then any other DDPLAUNCH_* present.
  static const char* const kOwn[] = {c::kTimeoutSeconds, c::kGeneration, c::kNodeRank,
                                     c::kNodeCount, c::kStatusSocket, c::kJobId};
  for (const char* name : kOwn) {
    const char* value = std::getenv(name);
    out += std::string("ENV ") + name + (value ? std::string("=") + value : " unset") + "\n";
  }
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "DDPLAUNCH_", 10) != 0) continue;
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    bool known = false;
    for (const char* k : kOwn) known = known || name == k;
    if (!known) out += std::string("ENV ") + *e + "\n";
  }
  write_all(STDOUT_FILENO, out);
}

void print_lines(long rank, long count, long bytes) {
  for (long i = 0; i < count; ++i) {
    std::string line = "rank " + std::to_string(rank) + " line " + std::to_string(i) + " ";
    if (static_cast<long>(line.size()) + 1 < bytes) line.append(bytes - 1 - line.size(), 'x');
    line += '\n';
    write_all(STDOUT_FILENO, line);
    if (i % 10 == 0)
      write_all(STDERR_FILENO, "rank " + std::to_string(rank) + " err " + std::to_string(i) + "\n");
  }
}

void fork_grandchild() {
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "fake_worker: fork failed: %s\n", std::strerror(errno));
    return;
  }
  if (pid == 0) sleep_forever();  // stays in our process group; the launcher must kill it
  std::printf("GRANDCHILD_PID=%d\n", static_cast<int>(pid));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  auto options = parse(argc, argv);
  if (!options) return 2;
  const Options& o = *options;
  long rank = env_long(c::kRank, -1);
  long generation = env_long(c::kGeneration, 0);

  std::printf("FAKE_WORKER_PID=%d RANK=%ld\n", static_cast<int>(::getpid()), rank);
  std::fflush(stdout);
  if (o.ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
  if (o.print_env) print_env();

  // Init: a failure or hang chosen for this generation and rank wins over --report-init.
  bool this_rank = !o.fail_rank || *o.fail_rank == rank;
  const bool fails_this_generation = o.fail_init_gen && (*o.fail_init_gen == generation || *o.fail_init_gen == -1);
  if (fails_this_generation && this_rank) {
    std::string what = "fake init failure on generation " + std::to_string(generation);
    ddplaunch::shim::report(c::StatusEvent::InitBegin, "fake_worker");
    if (o.fail_init_after_ms > 0) sleep_ms(o.fail_init_after_ms);
    ddplaunch::shim::report(c::StatusEvent::InitFailed, what);
    std::fprintf(stderr, "fake_worker rank %ld: %s\n", rank, what.c_str());
    return 3;
  }
  if (o.hang_init_gen && *o.hang_init_gen == generation && this_rank) {
    ddplaunch::shim::report(c::StatusEvent::InitBegin, "fake_worker");
    std::printf("fake_worker rank %ld: hanging in init on generation %ld\n", rank, generation);
    std::fflush(stdout);
    sleep_forever();
  }
  if (o.report_init) {
    ddplaunch::shim::report(c::StatusEvent::InitBegin, "fake_worker");
    ddplaunch::shim::report(c::StatusEvent::InitOk, "fake_worker");
  }

  if (o.lines > 0) print_lines(rank, o.lines, o.line_bytes);
  if (o.fork_grandchild) fork_grandchild();
  if (o.sleep_ms > 0) sleep_ms(o.sleep_ms);
  if (o.hang) sleep_forever();
  if (o.signal) {
    std::fflush(nullptr);
    ::signal(*o.signal, SIG_DFL);
    ::raise(*o.signal);
  }
  return o.exit_code;
}
