// The host check's script, answer and verdict: see host_check.h.
#include "fanout/host_check.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fanout/remote_command.h"

namespace ddplaunch::fanout {

namespace {

constexpr std::string_view kTag = "ddplaunch-check ";

// The last non-empty line of ssh's complaints, which names the cause ("Connection refused",
// "Permission denied (publickey)", "Host key verification failed.").
std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  auto at = text.rfind('\n');
  return std::string(at == std::string_view::npos ? text : text.substr(at + 1));
}

std::string ssh_hint(std::string_view why) {
  if (why.find("Permission denied") != std::string_view::npos)
    return " — the fan-out logs in without prompts (BatchMode): add your key to the host (ssh-copy-id), or load it "
           "in ssh-agent";
  if (why.find("Host key verification failed") != std::string_view::npos)
    return " — its host key is not known yet: connect once with ssh, or set StrictHostKeyChecking accept-new for it "
           "in ~/.ssh/config";
  if (why.find("Could not resolve") != std::string_view::npos) return " — check the name, or add it to ~/.ssh/config";
  return " — is the host up and its sshd running? (ssh's timeout: --connect-timeout)";
}

// A check that ran out of time: how far it got says whether the login, the shell or the host's
// ddplaunch is what did not answer. A login shell runs its start-up files (~/.bashrc) before
// the command, so a slow one (pyenv's rehash waits on a lock that concurrent logins share)
// looks exactly like a login that never finished.
std::string timeout_problem(const CheckRun& run, const HostReport& report) {
  if (run.output.find(kTag) == std::string::npos) {
    std::string why = last_line(run.errors);
    return fmt::format("no answer within {:g} s: the check never started there{} — either ssh did not log in or the "
                       "login shell's start-up files (~/.bashrc) did not finish: try `ssh HOST true` by hand; "
                       "--connect-timeout raises the bound",
                       run.timeout_s, why.empty() ? "" : " (ssh said: " + why + ")");
  }
  if (!report.launcher.empty() && report.version.empty())
    return fmt::format("no answer within {:g} s: ssh logged in, but `{} --version` there did not finish: is the host "
                       "overloaded, or that file not a working ddplaunch?", run.timeout_s, report.launcher);
  return fmt::format("no answer within {:g} s: ssh logged in, but the check's shell did not finish: is the host "
                     "overloaded or its shell waiting for input?", run.timeout_s);
}

}  // namespace

std::vector<NeededProgram> needed_programs(const std::vector<std::string>& typed,
                                           const std::vector<std::string>& command) {
  if (command.empty()) return {};
  std::vector<NeededProgram> out;
  const bool through_python = typed.empty() || command.front() != typed.front();
  if (!through_python) {
    out.push_back({command.front(), {command.front()}, false});
    // `python3 train.py` typed as is: the script is needed too.
    const std::string_view interpreter = std::string_view(command.front()).substr(command.front().rfind('/') + 1);
    if (command.size() > 1 && interpreter.starts_with("python") && command[1].ends_with(".py"))
      out.push_back({command[1], {command[1]}, true});
    return out;
  }
  // The interpreter: as chosen here, or, when that is the default, whichever the host has.
  std::vector<std::string> interpreters{command.front()};
  if (command.front() == "/usr/bin/python3") interpreters.push_back("python3");
  out.push_back({command.front(), interpreters, false});
  const bool module = std::find(command.begin(), command.end(), "-m") != command.end();
  if (!module && !typed.empty()) out.push_back({typed.front(), {typed.front()}, true});
  return out;
}

std::string check_command(const CheckRequest& request) {
  std::string script = fmt::format(
      "echo \"{0}ssh $SSH_CONNECTION\"\n"
      "cd {1} 2>/dev/null && echo '{0}cwd found'\n"
      "L={2}; [ -x \"$L\" ] || L=$(command -v ddplaunch 2>/dev/null) || L=\n"
      "if [ -n \"$L\" ]; then echo \"{0}launcher $L\"; echo \"{0}version $(\"$L\" --version 2>&1 | head -n 1)\"; fi\n",
      kTag, shell_quote(request.cwd), shell_quote(request.launcher));
  for (std::size_t i = 0; i < request.needed.size(); ++i) {
    const NeededProgram& need = request.needed[i];
    std::vector<std::string> tests;
    for (const auto& alternative : need.alternatives)
      tests.push_back(need.file ? fmt::format("[ -f {} ]", shell_quote(alternative))
                      : alternative.find('/') != std::string::npos  // dash's `command -v ./x` ignores the mode
                          ? fmt::format("[ -x {} ]", shell_quote(alternative))
                          : fmt::format("command -v {} >/dev/null 2>&1", shell_quote(alternative)));
    script += fmt::format("if {}; then echo '{}found {}'; fi\n", fmt::join(tests, " || "), kTag, i);
  }
  return "exec /bin/sh -c " + shell_quote(script);
}

HostReport parse_check_output(std::string_view output, const CheckRequest& request) {
  HostReport report;
  std::vector<bool> found(request.needed.size(), false);
  while (!output.empty()) {
    std::string_view line = output.substr(0, output.find('\n'));
    output.remove_prefix(std::min(output.size(), line.size() + 1));
    if (line.substr(0, kTag.size()) != kTag) continue;  // a login banner, a shell's chatter
    line.remove_prefix(kTag.size());
    std::string_view key = line.substr(0, line.find(' '));
    std::string_view value = line.substr(std::min(line.size(), key.size() + 1));
    if (key == "ssh") {  // "CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT"
      std::vector<std::string_view> fields;
      for (std::size_t at = 0; at < value.size();) {
        std::size_t end = std::min(value.find(' ', at), value.size());
        if (end > at) fields.push_back(value.substr(at, end - at));
        at = end + 1;
      }
      if (fields.size() == 4) report.reached_address = std::string(fields[2]);
    } else if (key == "cwd") {
      report.cwd_found = true;
    } else if (key == "launcher") {
      report.launcher = std::string(value);
    } else if (key == "version") {
      report.version = std::string(value);
    } else if (key == "found") {
      std::size_t index = 0;
      for (char c : value) index = index * 10 + static_cast<std::size_t>(c - '0');
      if (index < found.size() && !value.empty()) found[index] = true;
    }
  }
  for (std::size_t i = 0; i < found.size(); ++i)
    if (!found[i]) report.missing.push_back(request.needed[i].label);
  return report;
}

std::string check_problem(const CheckRun& run, const HostReport& report, const CheckRequest& request,
                          std::string_view local_version) {
  if (run.timed_out) return timeout_problem(run, report);
  if (run.status.signaled || run.status.code == 255 || run.output.find(kTag) == std::string::npos) {
    std::string why = last_line(run.errors);
    if (why.empty()) why = run.status.describe();
    return fmt::format("ssh could not run a command there: {}{}", why, ssh_hint(why));
  }
  std::vector<std::string> problems;
  if (!report.cwd_found)
    problems.push_back(fmt::format("the directory {} does not exist there (the nodes start in this terminal's "
                                   "directory: use a shared filesystem or create it)", request.cwd));
  if (report.launcher.empty())
    problems.push_back(fmt::format("ddplaunch is not installed there: neither {} nor ddplaunch on the PATH of a "
                                   "non-interactive ssh session", request.launcher));
  else if (report.version != local_version)
    problems.push_back(fmt::format("{} is '{}', this one is '{}': install the same version on every host",
                                   report.launcher, report.version, local_version));
  if (!report.missing.empty())
    problems.push_back(fmt::format("the program is missing there: {} not found", fmt::join(report.missing, ", ")));
  return fmt::format("{}", fmt::join(problems, "; "));
}

}  // namespace ddplaunch::fanout
