// Quoting and assembly of the ssh and remote ddplaunch commands: see remote_command.h.
#include "fanout/remote_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fanout/stdin_control.h"

namespace ddplaunch::fanout {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// "--name=value" → "name"; "--name" → "name".
std::string_view option_name(std::string_view option) {
  option.remove_prefix(std::min<std::size_t>(2, option.size()));
  return option.substr(0, option.find('='));
}

// Keys of `--set KEY=VALUE` and flags that the fan-out decides per node.
constexpr std::array kOwnedFlags = {"hosts",  "hostfile",    "include",       "exclude",     "token",
                                    "token-file", "token-stdin", "stop-on-stdin-eof", "nnodes", "node-rank",
                                    "rdzv-endpoint", "master-addr", "master-port", "standalone", "slurm", "export",
                                    "env-file", "env-stdin"};
constexpr std::array kOwnedKeys = {"nodes", "membership.min_nodes", "node_rank", "master", "token", "token_file",
                                   "standalone", "slurm"};
// (The token reaches each node on its stdin; the etcd password is not sent: the fan-out runs
// its own rendezvous, and a secret in the ssh command line is in every `ps` of both hosts.)
constexpr std::array kOwnedVariables = {"DDPLAUNCH_TOKEN", "DDPLAUNCH_ETCD_PASSWORD", "DDPLAUNCH_SSH", "PET_NNODES", "PET_NODE_RANK",
                                        "PET_RDZV_ENDPOINT", "PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_STANDALONE"};
constexpr std::array kForwardedPrefixes = {"NCCL_", "GLOO_", "TORCH_", "TORCHELASTIC_", "PYTHON", "OMP_", "PET_",
                                           "DDPLAUNCH_"};

template <typename List>
bool listed(const List& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::string shell_quote(std::string_view text) {
  const bool safe = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

SshCommand ssh_command(const Environment& env, double connect_timeout_s) {
  SshCommand out;
  out.connect_timeout_s = std::max(1, static_cast<int>(std::ceil(std::max(connect_timeout_s, 5.0))));
  auto it = env.find("DDPLAUNCH_SSH");
  if (it == env.end()) {
    out.words = {"ssh"};
    return out;
  }
  std::string word;
  for (char c : it->second + " ") {
    if (c != ' ' && c != '\t') word += c;
    else if (!word.empty()) out.words.push_back(std::move(word)), word.clear();
  }
  if (out.words.empty()) out.error = "DDPLAUNCH_SSH is set but blank: unset it (plain ssh) or name the ssh command";
  return out;
}

std::vector<std::string> ssh_argv(const SshCommand& ssh, const std::string& host, const std::string& remote_command) {
  std::vector<std::string> argv = ssh.words;
  for (std::string option : {std::string("BatchMode=yes"), fmt::format("ConnectTimeout={}", ssh.connect_timeout_s),
                             std::string("ServerAliveInterval=5"), std::string("ServerAliveCountMax=3")})
    argv.insert(argv.end(), {"-o", option});
  argv.push_back(host);
  argv.push_back(remote_command);
  return argv;
}

std::vector<std::pair<std::string, std::string>> forwarded_environment(const Environment& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : env) {
    const bool wanted = std::any_of(kForwardedPrefixes.begin(), kForwardedPrefixes.end(),
                                    [&](const char* prefix) { return starts_with(key, prefix); });
    if (wanted && !listed(kOwnedVariables, key)) out.emplace_back(key, value);
  }
  return out;
}

namespace {
// One "VAR=VALUE" (or, from -x only, "VAR": its value here) checked; "" or what is wrong.
std::string add_user_variable(std::string_view entry, bool from_file, const Environment& env,
                              std::vector<std::pair<std::string, std::string>>& out) {
  const auto equals = entry.find('=');
  const std::string name(entry.substr(0, equals));
  if (!is_variable_name(name))
    return fmt::format("'{}' is not a variable name (letters, digits and _, not starting with a digit)", name);
  if (listed(kOwnedVariables, name))
    return fmt::format("{} is the fan-out's own (it sets it for each node, or sends it another way): leave it out",
                       name);
  std::string value;
  if (equals != std::string_view::npos) {
    value = std::string(entry.substr(equals + 1));
  } else if (from_file) {
    return fmt::format("'{}' has no '=': write {}=VALUE", name, name);
  } else {
    auto it = env.find(name);
    if (it == env.end()) return fmt::format("-x {}: {} is not set here; export it or give -x {}=VALUE", name, name, name);
    value = it->second;
  }
  if (value.find('\0') != std::string::npos)
    return fmt::format("{}'s value holds a NUL byte, which no environment variable can hold", name);
  std::erase_if(out, [&](const auto& kv) { return kv.first == name; });  // the later one wins
  out.emplace_back(name, std::move(value));
  return {};
}
}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> user_environment(const std::vector<std::string>& exported,
                                                                          std::string_view env_file_text,
                                                                          const std::string& env_file_name,
                                                                          const Environment& env) {
  using R = Result<std::vector<std::pair<std::string, std::string>>>;
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < env_file_text.size();) {
    std::size_t end = env_file_text.find('\n', start);
    if (end == std::string_view::npos) end = env_file_text.size();
    std::string_view line = env_file_text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("export ")) line.remove_prefix(7);
    if (std::string problem = add_user_variable(line, true, env, out); !problem.empty())
      return R::failure(fmt::format("{}:{}: {}", env_file_name, line_number, problem));
  }
  for (const auto& entry : exported)
    if (std::string problem = add_user_variable(entry, false, env, out); !problem.empty()) return R::failure(problem);
  return R::success(std::move(out));
}

std::vector<std::pair<std::string, std::string>> with_user_environment(
    std::vector<std::pair<std::string, std::string>> forwarded,
    const std::vector<std::pair<std::string, std::string>>& user) {
  for (const auto& [name, value] : user) {
    std::erase_if(forwarded, [&](const auto& kv) { return kv.first == name; });
    forwarded.emplace_back(name, value);
  }
  return forwarded;
}

std::vector<std::string> forwarded_options(const std::vector<std::string>& options, bool host_sets_nproc) {
  std::vector<std::string> out;
  for (const auto& option : options) {
    std::string_view name = option_name(option);
    if (listed(kOwnedFlags, name) || (host_sets_nproc && name == "nproc-per-node")) continue;
    if (name == "set") {
      std::string_view assignment = std::string_view(option).substr(option.find('=') + 1);
      if (listed(kOwnedKeys, assignment.substr(0, assignment.find('='))) ||
          (host_sets_nproc && starts_with(assignment, "nproc_per_node=")))
        continue;
    }
    out.push_back(option);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> node_variables(const NodeLaunch& launch) {
  std::vector<std::pair<std::string, std::string>> variables = launch.env;
  if (!launch.host.devices.empty()) {
    std::erase_if(variables, [](const auto& kv) { return kv.first == "CUDA_VISIBLE_DEVICES"; });
    variables.emplace_back("CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(launch.host.devices, ",")));
  }
  return variables;
}

std::string launch_command(const NodeLaunch& launch) {
  std::vector<std::string> words{launch.launcher};
  if (!launch.subcommand.empty()) words.push_back(launch.subcommand);
  words.insert(words.end(), {"--nnodes", std::to_string(launch.node_count), "--node-rank",
                             std::to_string(launch.node_rank), "--rdzv-endpoint", launch.master, "--token-stdin",
                             "--env-stdin", "--stop-on-stdin-eof"});
  words.insert(words.end(), launch.options.begin(), launch.options.end());
  if (launch.host.slots > 0 || !launch.host.devices.empty())
    words.insert(words.end(), {"--nproc-per-node", std::to_string(launch.host.workers(1))});
  words.push_back("--");
  words.insert(words.end(), launch.program.begin(), launch.program.end());
  return "cd " + shell_quote(launch.cwd) + " && exec " + shell_words(words);
}

}  // namespace ddplaunch::fanout
