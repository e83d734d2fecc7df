// Terminal and log-file output of worker lines.
#include "output/worker_output.h"

#include "output/terminal_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "ddplaunch/rendezvous/generation_format.h"
#include "output/line_splitter.h"
#include "output/log_directory.h"
#include "output/live_status_line.h"
#include "output/prompt_line.h"

namespace ddplaunch {

namespace {
constexpr std::string_view kHeaderStart = "===== ddplaunch generation ";

// Moves an earlier generation's rank_<R>.log aside (a regular file only: a planted symlink
// stays, and the open below refuses it). Relative to the directory opened once.
void rotate_previous_generation(const LogDirectory& dir, int rank, const std::string& name) {
  struct stat info {};
  if (::fstatat(dir.fd(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode)) return;
  char first[128] = {};
  ssize_t n = 0;
  if (int fd = dir.open_file(name, O_RDONLY); fd >= 0) {
    n = ::read(fd, first, sizeof first - 1);
    ::close(fd);
  }
  std::string_view line(first, n > 0 ? static_cast<std::size_t>(n) : 0);
  line = line.substr(0, line.find('\n'));
  const std::string target = rotated_log_name(rank, line);
  ::renameat(dir.fd(), name.c_str(), dir.fd(), target.c_str());  // failing that, this generation appends
}
std::string not_a_regular_file(const std::string& path) {
  return fmt::format("refusing log file '{}': it is not a regular file (a FIFO or device someone may have planted "
                     "would block or divert the output); remove it or give --log-dir another directory",
                     path);
}
}  // namespace

std::string rotated_log_name(int rank, std::string_view first_line) {
  if (first_line.substr(0, kHeaderStart.size()) == kHeaderStart) {
    std::string_view rest = first_line.substr(kHeaderStart.size());
    std::size_t digits = 0;
    while (digits < rest.size() && digits < 18 && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits > 0 && rest.substr(digits, 2) == " |")
      return fmt::format("rank_{}.gen{}.log", rank, rest.substr(0, digits));
  }
  return fmt::format("rank_{}.previous.log", rank);
}

Result<std::string> make_log_directory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/ddplaunch-logs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (::mkdtemp(pattern.data()) == nullptr)
    return Result<std::string>::failure(fmt::format(
        "cannot create a log directory like {}: {}; give --log-dir DIR", pattern, std::strerror(errno)));
  return Result<std::string>::success(pattern);
}

bool write_fully(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // a write that takes nothing of a non-empty buffer
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string worker_prefix(int node_rank, int node_count, int rank) {
  return node_count > 1 ? fmt::format("[node {} rank {}]", node_rank, rank) : fmt::format("[rank {}]", rank);
}

std::string prefix_from_template(std::string_view text, std::string_view role, int rank, int local_rank) {
  const std::pair<std::string_view, std::string> values[] = {
      {"${role_name}", std::string(role)}, {"${rank}", std::to_string(rank)}, {"${local_rank}", std::to_string(local_rank)}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [key, value] : values)
      if (text.substr(i, key.size()) == key) {
        out += value;
        i += key.size();
        replaced = true;
        break;
      }
    if (!replaced) out += text[i++];
  }
  return out;
}

void write_prefixed_line(OutputStream stream, std::string_view prefix, std::string_view line,
                         std::string_view separator) {
  line = without_progress_mark(line);
  std::string text;
  text.reserve(prefix.size() + separator.size() + line.size() + 1);
  text.append(prefix).append(separator).append(line).append("\n");
  stderr_status_line().erase();
  ScopedPromptHide below_the_prompt;
  terminal_write(stream == OutputStream::Stdout ? STDOUT_FILENO : STDERR_FILENO, text);
}

void write_line(OutputStream stream, std::string_view line) {
  std::string text(without_progress_mark(line));
  ScopedPromptHide below_the_prompt;
  terminal_write(stream == OutputStream::Stdout ? STDOUT_FILENO : STDERR_FILENO, text.append("\n"));
}

RankLogFile& RankLogFile::operator=(RankLogFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    write_error_reported_ = other.write_error_reported_;
    other.fd_ = -1;
  }
  return *this;
}

RankLogFile::~RankLogFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RankLogFile::open(const std::string& log_dir, int rank, Generation generation, int node_rank,
                              const std::string& host) {
  // A symlink planted in place of the log directory or a log file would make us write
  // (as this user, maybe root) wherever it points: refused, naming the path.
  auto dir = LogDirectory::open_once(log_dir);
  if (!dir) return dir.error;
  const std::string name = fmt::format("rank_{}.log", rank);
  path_ = (*dir)->shown(name);
  write_error_reported_ = false;
  rotate_previous_generation(**dir, rank, name);
  if (fd_ >= 0) ::close(fd_);
  // O_NONBLOCK: a FIFO planted in its place would block this open (and every write after it)
  // and with it the launcher's one event loop; only a regular file is written to.
  fd_ = (*dir)->open_file(name, O_WRONLY | O_CREAT | O_APPEND);
  if (fd_ < 0 && errno == ELOOP)
    return fmt::format("refusing log file '{}': it is a symbolic link (someone else may have planted it); remove it "
                       "or give --log-dir another directory",
                       path_);
  if (fd_ < 0 && errno == ENXIO) return not_a_regular_file(path_);  // a FIFO without a reader
  if (fd_ < 0) return fmt::format("cannot open log file '{}': {}", path_, std::strerror(errno));
  if (struct stat opened {}; ::fstat(fd_, &opened) != 0 || !S_ISREG(opened.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    return not_a_regular_file(path_);
  }
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  write_checked(fmt::format("{}{} | rank {} | node {} ({}) | started {} =====\n", kHeaderStart, generation, rank,
                            node_rank, host, when));
  return {};
}

// A full disk or a failing file system cuts the log: said once per file, naming it and the
// error (the terminal still shows the lines, as far as its own filters let it).
void RankLogFile::write_checked(std::string_view text) {
  if (write_fully(fd_, text) || write_error_reported_) return;
  spdlog::warn("the log file {} is missing lines from now on: {} (free space on that file system, or give "
               "--log-dir another directory)",
               path_, std::strerror(errno));
  write_error_reported_ = true;
}

void RankLogFile::write_line(OutputStream stream, std::string_view line) {
  if (fd_ < 0) return;
  line = without_progress_mark(line);
  std::string text;
  text.reserve(line.size() + 8);
  text.append(stream == OutputStream::Stderr ? "[err] " : "").append(line).append("\n");
  write_checked(text);
}

}  // namespace ddplaunch
