// Job records: write, read, choose.
#include "job_record.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ddplaunch {

namespace {
// Where records may be: $XDG_RUNTIME_DIR/ddplaunch-jobs when that folder exists here (a Slurm
// step may inherit one that does not), and /tmp/ddplaunch-jobs-<uid>.
std::vector<std::string> candidate_directories() {
  std::vector<std::string> out;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  struct stat info {};
  if (runtime && *runtime && ::stat(runtime, &info) == 0 && S_ISDIR(info.st_mode))
    out.push_back(std::string(runtime) + "/ddplaunch-jobs");
  out.push_back(fmt::format("/tmp/ddplaunch-jobs-{}", ::getuid()));
  return out;
}

// Why `info` (lstat of a record folder) is not a private folder of this user, or "".
std::string not_private_because(const std::string& dir, const struct stat& info) {
  if (S_ISLNK(info.st_mode)) {
    std::error_code ignored;
    const std::string target = std::filesystem::read_symlink(dir, ignored).string();
    return fmt::format("it is a symbolic link (to '{}'), which someone else may have planted to read or fake your "
                       "jobs' records",
                       target);
  }
  if (!S_ISDIR(info.st_mode)) return "it is not a folder";
  if (info.st_uid != ::getuid())
    return fmt::format("it belongs to another user (uid {}), who may have made it before you to hide or fake your "
                       "jobs' records",
                       info.st_uid);
  if ((info.st_mode & 077) != 0)
    return fmt::format("others may read or change it (mode {:04o}, not 0700)", info.st_mode & 07777);
  return "";
}

Result<std::string> private_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Result<std::string>::failure(fmt::format("cannot make the job record folder {}: {}", dir, std::strerror(errno)));
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0)
    return Result<std::string>::failure(fmt::format("cannot read the job record folder {}: {}", dir, std::strerror(errno)));
  if (std::string why = not_private_because(dir, info); !why.empty())
    return Result<std::string>::failure(fmt::format(
        "refusing the job record folder {}: {}. Launchers of yours cannot record their jobs there, and `ddplaunch "
        "status` cannot find them: remove it (as its owner or root: rm -r {}), or set XDG_RUNTIME_DIR to a private "
        "folder of yours on every launcher; meanwhile give --master HOST:PORT",
        dir, why, dir));
  return Result<std::string>::success(dir);
}
void read_records(const std::string& directory, std::vector<JobRecord>& out);

// The name of the program a process runs ("" when it is gone or cannot be read); a replaced
// binary reads "NAME (deleted)".
std::string program_name_of(long pid) {
  std::error_code ignored;
  std::string exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), ignored).filename().string();
  constexpr std::string_view kDeleted = " (deleted)";
  if (exe.size() > kDeleted.size() && exe.compare(exe.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
    exe.resize(exe.size() - kDeleted.size());
  return exe;
}
}  // namespace

bool launcher_still_runs(long pid) {
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return false;
  // Pids are reused: the record's launcher runs only while that pid is a ddplaunch still.
  return program_name_of(pid).rfind("ddplaunch", 0) == 0;
}

Result<std::string> job_record_directory() {
  Result<std::string> last = Result<std::string>::failure("no job record directory");
  for (const std::string& dir : candidate_directories())
    if ((last = private_directory(dir))) return last;
  return last;
}

std::string format_job_record(const JobRecord& r) {
  return fmt::format("job_id={}\nmaster={}\npid={}\ntoken={}\n", r.job_id, r.master, r.pid, r.token);
}

std::optional<JobRecord> parse_job_record(std::string_view text) {
  JobRecord r;
  bool has_id = false, has_master = false, has_pid = false;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "job_id") r.job_id = value, has_id = !value.empty();
    else if (key == "master") r.master = value, has_master = !value.empty();
    else if (key == "token") r.token = value;
    else if (key == "pid") r.pid = std::strtol(std::string(value).c_str(), nullptr, 10), has_pid = r.pid > 0;
  }
  if (!has_id || !has_master || !has_pid) return std::nullopt;
  return r;
}

Result<std::string> write_job_record(const JobRecord& record) {
  auto dir = job_record_directory();
  if (!dir) return dir;
  // A folder of its own ("ddplaunch-PID"), which the orphan guard removes if the launcher is killed.
  const std::string folder = fmt::format("{}/ddplaunch-{}", *dir, record.pid);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    return Result<std::string>::failure(fmt::format("cannot make {}: {}", folder, std::strerror(errno)));
  const std::string path = folder + "/job";
  const std::string text = format_job_record(record);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Result<std::string>::failure(fmt::format("cannot write the job record {}: {}", path, std::strerror(errno)));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    ::rmdir(folder.c_str());
    return Result<std::string>::failure(fmt::format("cannot write the job record {}", path));
  }
  return Result<std::string>::success(folder);
}

void remove_job_record(const std::string& folder) {
  ::unlink((folder + "/job").c_str());
  ::rmdir(folder.c_str());
}

std::vector<JobRecord> running_job_records() {
  std::vector<JobRecord> out;
  for (const std::string& dir : candidate_directories()) read_records(dir, out);
  return out;
}

std::vector<std::string> refused_job_record_directories() {
  std::vector<std::string> out;
  for (const std::string& dir : candidate_directories())
    if (auto usable = private_directory(dir); !usable) out.push_back(usable.error);
  return out;
}

namespace {
// The records in `directory` of launchers still running (a stale one is removed).
void read_records(const std::string& directory, std::vector<JobRecord>& out) {
  auto dir = private_directory(directory);
  if (!dir) return;
  DIR* listing = ::opendir(dir->c_str());
  if (!listing) return;
  for (dirent* entry; (entry = ::readdir(listing)) != nullptr;) {
    const std::string name = entry->d_name;
    if (name.rfind("ddplaunch-", 0) != 0) continue;
    const std::string folder = *dir + "/" + name, path = folder + "/job";
    std::ifstream file(path);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    auto record = parse_job_record(text.substr(0, 64 * 1024));
    if (!record) continue;
    if (!launcher_still_runs(record->pid)) {  // its launcher is gone (its pid may be another program's now)
      ::unlink(path.c_str());
      ::rmdir(folder.c_str());
      continue;
    }
    out.push_back(std::move(*record));
  }
  ::closedir(listing);
}
}  // namespace

std::vector<std::string> recorded_tokens(const std::vector<JobRecord>& records, const std::string& job_id,
                                         const std::string& master) {
  std::vector<std::string> tokens;
  for (const auto& r : records)
    if ((r.job_id == job_id || (!master.empty() && r.master == master)) && !r.token.empty() &&
        std::find(tokens.begin(), tokens.end(), r.token) == tokens.end())
      tokens.push_back(r.token);
  return tokens;
}

Result<JobRecord> choose_job_record(const std::vector<JobRecord>& records, const std::string& job_id,
                                    const std::vector<std::string>& refused_directories) {
  std::vector<const JobRecord*> chosen;
  for (const auto& r : records)
    if (job_id.empty() || r.job_id == job_id) chosen.push_back(&r);
  // Every launcher of a multi-node job on one machine writes one: the same job, the same master.
  if (!chosen.empty() && std::all_of(chosen.begin(), chosen.end(), [&](const JobRecord* r) {
        return r->job_id == chosen.front()->job_id && r->master == chosen.front()->master;
      })) {
    for (const JobRecord* r : chosen)
      if (!r->token.empty()) return Result<JobRecord>::success(*r);
    return Result<JobRecord>::success(*chosen.front());
  }
  // A folder that was refused may hold the job: "none is running" would be a guess then.
  std::string refusals;
  for (const std::string& refused : refused_directories) refusals += "\n" + refused;
  if (chosen.empty() && !refusals.empty())
    return Result<JobRecord>::failure(
        fmt::format("no record of {} was found on this node, but not every record folder could be read:{}",
                    job_id.empty() ? std::string("a running ddplaunch job") : "job '" + job_id + "'", refusals));
  if (chosen.empty() && !job_id.empty())
    return Result<JobRecord>::failure(fmt::format(
        "no job '{}' is running on this node (ddplaunch keeps a record of each running job here); give --master "
        "HOST:PORT of its rendezvous",
        job_id));
  if (chosen.empty())
    return Result<JobRecord>::failure(
        "no ddplaunch job is running on this node; give --master HOST:PORT (and --job-id) of the job's rendezvous");
  // One line per job: the launchers of one job on this node (a loopback job) share it.
  std::string list;
  for (auto r = chosen.begin(); r != chosen.end(); ++r) {
    const auto same_job = [&](const JobRecord* other) { return other->job_id == (*r)->job_id && other->master == (*r)->master; };
    if (std::any_of(chosen.begin(), r, same_job)) continue;
    std::vector<long> pids;
    for (const JobRecord* other : chosen)
      if (same_job(other)) pids.push_back(other->pid);
    list += fmt::format("\n  --job {}   (master {}, launcher pid{} {})", (*r)->job_id, (*r)->master,
                        pids.size() > 1 ? "s" : "", fmt::join(pids, ", "));
  }
  return Result<JobRecord>::failure("several ddplaunch jobs run on this node; say which with --job:" + list);
}

}  // namespace ddplaunch
