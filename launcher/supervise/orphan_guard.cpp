// The guard loop: read "+PGID\n" / "-PGID\n" records until EOF, then kill what is left.
#include "supervise/orphan_guard.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

[[noreturn]] void run_guard(int read_fd) {
  prctl(PR_SET_NAME, "ddplaunch-guard");
  // Ctrl-C reaches the launcher's whole process group; the guard must outlive it to act.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
  std::set<pid_t> groups;
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
      if (record.size() < 2) continue;
      pid_t group = static_cast<pid_t>(std::atol(record.c_str() + 1));
      if (group <= 1) continue;
      if (record[0] == '+') groups.insert(group);
      else groups.erase(group);
    }
  }
  for (pid_t group : groups) kill(-group, SIGKILL);
  _exit(0);
}

}  // namespace

std::string OrphanGuard::start() {
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
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != fds[0]) close(fd);
    run_guard(fds[0]);
  }
  close(fds[0]);
  pipe_fd_ = fds[1];
  guard_pid_ = pid;
  return {};
}

void OrphanGuard::send(char op, pid_t process_group) {
  if (pipe_fd_ < 0) return;
  std::string record = fmt::format("{}{}\n", op, process_group);
  (void)!write(pipe_fd_, record.data(), record.size());  // < PIPE_BUF: atomic
}

void OrphanGuard::watch(pid_t process_group) { send('+', process_group); }
void OrphanGuard::forget(pid_t process_group) { send('-', process_group); }

}  // namespace ddplaunch
