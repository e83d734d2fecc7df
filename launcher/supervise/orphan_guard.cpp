// The guard loop: read "+PGID\n" / "-PGID\n" / "dDIR\n" / "s\n" records until EOF, then
// kill what is left, sweep the job tag (only when workers were started and the launcher did
// not sweep after them) and remove the directories.
#include "supervise/orphan_guard.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>

#include "supervise/descendant_sweep.h"

namespace ddplaunch {

namespace {

// Only a directory the launcher made itself (ddplaunch-XXXXXX, not a symlink) is removed.
void remove_launcher_directory(const std::string& directory) {
  struct stat info {};
  if (std::filesystem::path(directory).filename().string().rfind("ddplaunch-", 0) != 0) return;
  if (::lstat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return;
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

// close_range(2) around `keep` (Linux 5.9); on older kernels one close per descriptor up to
// the limit, bounded.
void close_descriptors_from(int first, int keep) {
  auto close_span = [](unsigned from, unsigned to) {
    if (from > to) return;
    if (syscall(SYS_close_range, from, to, 0U) == 0) return;
    rlimit limit{};
    const unsigned highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (1U << 20)
                                 ? static_cast<unsigned>(limit.rlim_cur) : (1U << 20);
    for (unsigned fd = from; fd <= to && fd < highest; ++fd) close(static_cast<int>(fd));
  };
  close_span(static_cast<unsigned>(first), static_cast<unsigned>(keep) - 1);
  close_span(static_cast<unsigned>(keep) + 1, ~0U);
}

[[noreturn]] void run_guard(int read_fd, const std::string& job_tag) {
  prctl(PR_SET_NAME, "ddplaunch-guard");
  // Ctrl-C reaches the launcher's whole process group; the guard must outlive it to act.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
  std::set<pid_t> groups;
  std::set<std::string> directories;
  // A worker was started since the launcher last swept ("s"): if it dies now, its workers'
  // escaped descendants are the guard's to find.
  bool unswept_workers = false;
  std::string pending;
  char buf[512];
  for (;;) {
    ssize_t n = read(read_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // launcher gone (or closed us at a clean exit)
    pending.append(buf, static_cast<std::size_t>(n));
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      std::string record = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (record == "s") unswept_workers = false;
      if (record.size() < 2) continue;
      if (record[0] == 'd') {
        directories.insert(record.substr(1));
        continue;
      }
      pid_t group = static_cast<pid_t>(std::atol(record.c_str() + 1));
      if (group <= 1) continue;
      if (record[0] == '+') groups.insert(group), unswept_workers = true;
      else groups.erase(group);
    }
  }
  for (pid_t group : groups) kill(-group, SIGKILL);
  // The launcher died without sweeping: the workers' descendants that left their group are
  // found by the tag they inherited, in every process's environment (the guard is no
  // subreaper, and the launcher's tree is gone with it). Not after a clean exit, nor when
  // no worker was ever started (--version, a config error): nothing can carry the tag.
  if (unswept_workers) sweep_job_processes(job_tag, {});
  for (const auto& directory : directories) remove_launcher_directory(directory);
  _exit(0);
}

}  // namespace

std::string OrphanGuard::start() {
  job_tag_ = new_job_tag();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fmt::format("cannot create the guard pipe: {}", std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return fmt::format("cannot fork the orphan guard: {}", std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[1]);
    // Close everything else the launcher had open so the guard holds no sockets or pipes.
    close_descriptors_from(3, fds[0]);
    run_guard(fds[0], job_tag_);
  }
  close(fds[0]);
  pipe_fd_ = fds[1];
  guard_pid_ = pid;
  return {};
}

void OrphanGuard::send(char op, const std::string& value) {
  if (pipe_fd_ < 0) return;
  std::string record = fmt::format("{}{}\n", op, value);
  if (record.size() > PIPE_BUF || value.find('\n') != std::string::npos) return;  // atomic records only
  (void)!write(pipe_fd_, record.data(), record.size());
}

void OrphanGuard::watch(pid_t process_group) { send('+', std::to_string(process_group)); }
void OrphanGuard::forget(pid_t process_group) { send('-', std::to_string(process_group)); }
void OrphanGuard::remove_at_exit(const std::string& directory) { send('d', directory); }
void OrphanGuard::job_swept() { send('s', ""); }

}  // namespace ddplaunch
