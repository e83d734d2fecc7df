// RunHistory: see run_history.h.
#include "history/run_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string_view>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

constexpr double kMaxSaneSeconds = 7 * 24 * 3600.0;  // a week: anything longer is garbage
constexpr std::size_t kSeedWindow = 100;              // the last runs of a signature that count
constexpr double kOutlierFactor = 10;                 // a run this many times the median is an outlier
// What is read of the file: its newest part. kMaxRecords lines of ~60 bytes fit many times.
constexpr off_t kMaxReadBytes = 1 << 20;
constexpr std::size_t kMaxLineBytes = 512;

// The newest kMaxReadBytes of a regular file, without blocking (a FIFO planted at the path
// would block the launcher's start; a 256 MiB file would be read whole): "" plus `why` when
// it is not a regular file or cannot be read; ENOENT leaves `why` empty.
std::string read_newest_part(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) why = std::strerror(errno);
    return {};
  }
  std::string text;
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else {
    const off_t start = std::max<off_t>(0, st.st_size - kMaxReadBytes);
    text.resize(static_cast<std::size_t>(st.st_size - start));
    const ssize_t n = ::pread(fd, text.data(), text.size(), start);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    // Cut in the middle of a line: that first fragment is not a record.
    if (start > 0) text.erase(0, std::min(text.size(), text.find('\n') + 1));
  }
  ::close(fd);
  return text;
}

bool sane(double seconds) { return std::isfinite(seconds) && seconds >= 0 && seconds <= kMaxSaneSeconds; }

// The fields of a record, read as `std::istringstream >> field` would (C locale): each skips
// blank space, then takes the longest prefix of its grammar; whatever follows the last field
// is ignored. Without a stream: every start reads up to kMaxRecords lines.
class FieldReader {
 public:
  explicit FieldReader(std::string_view line) : s_(line) {}

  bool word(std::string& out) {
    skip_space();
    const std::size_t start = i_;
    while (i_ < s_.size() && !is_space(s_[i_])) ++i_;
    out.assign(s_.substr(start, i_ - start));
    return i_ > start;
  }
  // [+-]digits; out of range fails.
  bool integer(long long& out) {
    skip_space();
    std::size_t j = i_;
    if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
    const std::size_t digits = j;
    while (j < s_.size() && is_digit(s_[j])) ++j;
    if (j == digits) return false;
    const std::string token(s_.substr(i_, j - i_));
    i_ = j;
    errno = 0;
    char* end = nullptr;
    out = std::strtoll(token.c_str(), &end, 10);
    return errno != ERANGE && end == token.c_str() + token.size();
  }
  // [+-]digits[.digits][(e|E)[+-]digits], as num_get collects it (no inf, nan or hex); the
  // collected text must convert whole and finite.
  bool real(double& out) {
    skip_space();
    std::size_t j = i_;
    if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
    bool mantissa = false, point = false;
    for (; j < s_.size(); ++j) {
      if (is_digit(s_[j])) mantissa = true;
      else if (s_[j] == '.' && !point) point = true;
      else break;
    }
    if (mantissa && j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
      ++j;
      if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
      while (j < s_.size() && is_digit(s_[j])) ++j;
    }
    const std::string token(s_.substr(i_, j - i_));
    i_ = j;
    char* end = nullptr;
    out = std::strtod(token.c_str(), &end);
    return !token.empty() && end == token.c_str() + token.size() && !std::isinf(out);
  }

 private:
  static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  void skip_space() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

bool host_name_ok(std::string_view host) {
  if (host.empty() || host.size() > HostTrouble::kMaxHostBytes) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

// "@host/failures/slowdowns"; anything else (a garbled or hostile line) is nothing.
std::optional<HostTrouble> parse_host_mark(std::string_view mark) {
  if (mark.size() < 5 || mark[0] != '@') return std::nullopt;
  mark.remove_prefix(1);
  const auto first = mark.find('/');
  const auto second = first == std::string_view::npos ? first : mark.find('/', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  HostTrouble t;
  t.host = std::string(mark.substr(0, first));
  const auto count = [](std::string_view digits, int& out) {
    if (digits.empty() || digits.size() > 6) return false;
    out = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  if (!host_name_ok(t.host) || !count(mark.substr(first + 1, second - first - 1), t.failures) ||
      !count(mark.substr(second + 1), t.slowdowns))
    return std::nullopt;
  return t;
}

std::optional<RunRecord> parse_line(std::string_view line) {
  FieldReader in(line);
  std::string version;
  RunRecord r;
  if (!(in.word(version) && in.word(r.signature) && in.integer(r.unix_time) && in.real(r.init_s) &&
        in.real(r.max_step_s)) ||
      version != "v1")
    return std::nullopt;
  if (r.signature.empty() || r.signature.size() > 64) return std::nullopt;
  if (!sane(r.init_s)) r.init_s = -1;
  if (!sane(r.max_step_s)) r.max_step_s = -1;
  std::string mark;
  while (in.word(mark) && r.troubled_hosts.size() < HostTrouble::kMaxPerRun) {
    if (auto trouble = parse_host_mark(mark)) r.troubled_hosts.push_back(*trouble);
  }
  return r;
}

// Nearest-rank p99 of the values >= 0; -1 when fewer than min_samples. Below 100 samples
// that is the largest, so one absurd run (a forged report, a machine that swapped) would be
// the seed: values over kOutlierFactor x the median are dropped first.
double p99(std::vector<double> values, int min_samples) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return v < 0; }), values.end());
  if (static_cast<int>(values.size()) < min_samples) return -1;
  std::sort(values.begin(), values.end());
  const double median = values[values.size() / 2];
  if (median > 0)
    values.erase(std::upper_bound(values.begin(), values.end(), kOutlierFactor * median), values.end());
  std::size_t rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

std::string job_signature(const std::string& program_fingerprint, int nodes, const std::string& interface_name) {
  // Not a security boundary: a stable short key (FNV-1a, 64 bit) for grouping runs.
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : program_fingerprint + "|" + std::to_string(nodes) + "|" + interface_name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::string RunHistory::default_path() {
  if (const char* p = std::getenv("DDPLAUNCH_HISTORY"); p && *p) return p;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) return std::string(state) + "/ddplaunch/history";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/ddplaunch/history";
}

RunHistory RunHistory::load(const std::string& path, std::string* warning) {
  RunHistory h;
  h.path_ = path;
  std::string why;
  const std::string text = read_newest_part(path, why);
  if (!why.empty()) {
    if (warning) *warning = fmt::format("run history {} is not readable ({}); starting without it", path, why);
    h.unreadable_ = why;
    return h;
  }
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    std::optional<RunRecord> r;
    if (line.size() <= kMaxLineBytes) r = parse_line(line);
    if (r) h.records_.push_back(*r);
    else ++h.skipped_lines_;
    start = end + 1;
  }
  if (h.records_.size() > kMaxRecords) h.records_.erase(h.records_.begin(), h.records_.end() - kMaxRecords);
  return h;
}

std::string RunHistory::add_and_save(const RunRecord& record) {
  records_.push_back(record);
  if (records_.size() > kMaxRecords) records_.erase(records_.begin(), records_.end() - kMaxRecords);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& r : records_) {
      out << fmt::format("v1 {} {} {:.3f} {:.3f}", r.signature, r.unix_time, r.init_s, r.max_step_s);
      std::size_t marks = 0;
      for (const auto& t : r.troubled_hosts) {
        if (marks == HostTrouble::kMaxPerRun || !host_name_ok(t.host) || (t.failures <= 0 && t.slowdowns <= 0)) continue;
        out << fmt::format(" @{}/{}/{}", t.host, std::clamp(t.failures, 0, 999999), std::clamp(t.slowdowns, 0, 999999));
        ++marks;
      }
      out << '\n';
    }
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return fmt::format("could not write the run history {}: {}", tmp, std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::filesystem::remove(tmp, ec);
    return fmt::format("could not replace the run history {}: {}", path_, why);
  }
  return "";
}

HistorySeed RunHistory::seed(const std::string& signature) const {
  std::vector<double> init, step;
  for (auto it = records_.rbegin(); it != records_.rend() && init.size() < kSeedWindow; ++it) {
    if (it->signature != signature) continue;
    init.push_back(it->init_s);
    step.push_back(it->max_step_s);
  }
  HistorySeed s;
  s.samples = static_cast<int>(init.size());
  s.init_p99_s = p99(init, kMinSamples);
  s.step_p99_s = p99(step, kMinSamples);
  s.explained = fmt::format("history: p99 of {} run(s) ({})", s.samples, path_);
  return s;
}

}  // namespace ddplaunch
