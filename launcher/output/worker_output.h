// Where worker lines go: the terminal with a "[rank R]" / "[node N rank R]" prefix (one
// write per line), and optionally a per-rank log file that survives restarts.
#pragma once

#include <string>
#include <string_view>

#include "ddplaunch/base/result.h"
#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch {

enum class OutputStream { Stdout, Stderr };

std::string worker_prefix(int node_rank, int node_count, int rank);

// Writes all of `data` to `fd`, retrying short writes and EINTR; false (errno says why) when
// the rest could not be written. Output errors are not fatal: most callers go on regardless.
bool write_fully(int fd, std::string_view data);

// torchrun's TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE: ${role_name}, ${rank} and ${local_rank}
// replaced, everything else kept as written (e.g. "[${role_name}${rank}|${local_rank}]:").
std::string prefix_from_template(std::string_view text, std::string_view role, int rank, int local_rank);

// Writes "<prefix> <line>\n" to the launcher's stdout or stderr in a single write(); a
// progress segment's trailing '\r' mark (line_splitter.h) is dropped.
void write_prefixed_line(OutputStream stream, std::string_view prefix, std::string_view line,
                         std::string_view separator = " ");
// The same without a prefix: a line that names its origin already (a fan-out's relay).
void write_line(OutputStream stream, std::string_view line);

// Per-rank log file under --log-dir: rank_<R>.log holds the current generation, which starts
// with a header line; the file of an earlier generation (this run's or a previous run's) is
// renamed rank_<R>.gen<G>.log first, G read from its header (rank_<R>.previous.log without
// one). A later run in the same directory replaces an earlier run's file of the same G.
class RankLogFile {
 public:
  RankLogFile() = default;
  RankLogFile(const RankLogFile&) = delete;
  RankLogFile& operator=(const RankLogFile&) = delete;
  RankLogFile(RankLogFile&& other) noexcept
      : fd_(other.fd_), path_(std::move(other.path_)), write_error_reported_(other.write_error_reported_) {
    other.fd_ = -1;
  }
  RankLogFile& operator=(RankLogFile&& other) noexcept;
  ~RankLogFile();

  // Returns "" or a user-facing error naming the path.
  std::string open(const std::string& log_dir, int rank, Generation generation, int node_rank, const std::string& host);
  void write_line(OutputStream stream, std::string_view line);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  void write_checked(std::string_view text);
  int fd_ = -1;
  std::string path_;
  bool write_error_reported_ = false;
};

// A new private directory for log files (torchrun's temporary log_dir for -r/-t without
// --log-dir): $TMPDIR/ddplaunch-logs-XXXXXX. Never removed by ddplaunch: the logs outlive it.
Result<std::string> make_log_directory();

// The name an existing rank_<R>.log moves to, from its first line: "rank_3.gen2.log".
std::string rotated_log_name(int rank, std::string_view first_line);

}  // namespace ddplaunch
