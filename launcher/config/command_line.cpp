// Command line → settings, through the flag table and CLI11. The program starts after `--`
// or at the first argument that is not an option (torchrun style), so everything after it
// belongs to the program. torchrun's PET_* variables fill the flags the line left out.
#include "config/command_line.h"

#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config/cli_app.h"
#include "config/flag_names.h"
#include "config/flag_values.h"
#include "config/launch_config.h"

extern char** environ;

namespace ddplaunch {

namespace {

// The arguments before the program, each as `--primary-name[=value]`, and the program.
struct SplitArguments {
  std::vector<std::string> options;
  std::vector<std::string> program;
  std::set<const OptionSpec*> given;
};

SplitArguments split_arguments(const std::vector<std::string>& args, std::size_t first, CommandLine& cl) {
  SplitArguments out;
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.program.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // first positional: the program starts here
      out.program.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    }
    const bool long_form = arg[1] == '-';
    std::string body = arg.substr(long_form ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string::npos) value = body.substr(eq + 1), body.resize(eq);
    const OptionSpec* flag = find_flag(body);
    if (!flag && !long_form && body.size() > 1 && !value) {  // -r3: a short flag with its value attached
      if (const OptionSpec* f = find_flag(body.substr(0, 1)); f && f->kind != ValueKind::Switch)
        flag = f, value = body.substr(1);
    }
    if (!flag && long_form) {  // an unambiguous prefix of a long flag, as torchrun's argparse takes it
      auto candidates = flags_with_prefix(body);
      if (candidates.size() == 1) {
        flag = candidates.front();
      } else if (candidates.size() > 1) {
        std::string names;
        for (const OptionSpec* c : candidates) names += (names.empty() ? "--" : ", --") + primary_name(*c);
        cl.errors.push_back(fmt::format("ambiguous option '{}': it could be {} (spell more of it)", arg, names));
        if (!value && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) ++i;  // its value, not the program
        continue;
      }
    }
    if (!flag) {
      std::string hint = suggest_flag(body);
      cl.errors.push_back(fmt::format("unknown option '{}'{} (see ddplaunch --help); put the program after '--' if "
                                      "this belongs to it",
                                      arg, hint.empty() ? "" : fmt::format(": did you mean {}?", hint)));
      continue;
    }
    if (flag->kind != ValueKind::Switch && !value) {
      if (i + 1 >= args.size()) {
        cl.errors.push_back(fmt::format("{} needs a value (see ddplaunch --help)", arg));
        continue;
      }
      value = args[++i];
    }
    out.given.insert(flag);
    out.options.push_back("--" + primary_name(*flag) + (value ? "=" + *value : ""));
  }
  return out;
}

// torchrun's --master-addr/--master-port name the static rendezvous; keep-alive keys of
// --rdzv-conf become heartbeats. Both need every flag seen first.
void combine(FlagContext& ctx) {
  CommandLine& cl = ctx.cl;
  if (ctx.master_addr || ctx.master_port) {
    const bool endpoint_given =
        std::any_of(cl.settings.begin(), cl.settings.end(), [](const auto& s) { return s.first == "master"; });
    if (endpoint_given) {
      cl.notes.push_back("--master-addr/--master-port are ignored: --rdzv-endpoint names the rendezvous (as in torchrun)");
    } else {
      std::string host = ctx.master_addr.value_or("127.0.0.1");
      if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
      std::string endpoint = host + ":" + ctx.master_port.value_or("29500");
      cl.settings.emplace_back("master", endpoint);
      cl.notes.push_back(fmt::format(
          "--master-addr/--master-port: node 0's ddplaunch hosts the rendezvous on {}; the workers' MASTER_PORT "
          "(rank 0's c10d store) is another free port (--worker-port auto)", endpoint));
    }
  }
  if (ctx.rdzv_backend == "etcd") {
    // The endpoint names etcd's members, not a ddplaunch rendezvous: the elected launcher
    // hosts that (on etcd.coordinator_port) and publishes where.
    std::erase_if(cl.settings, [](const auto& s) { return s.first == "master"; });
    if (!ctx.endpoint_given)
      cl.errors.push_back(fmt::format("{} needs --rdzv-endpoint HOST:PORT[,HOST:PORT...] of the etcd members (etcd's "
                                      "client port, usually 2379)",
                                      ctx.rdzv_backend_source));
    else
      cl.settings.emplace_back("etcd.endpoints", *ctx.endpoint_given);
  }
  if (ctx.keep_alive_interval_s || ctx.keep_alive_attempts) {
    double interval = ctx.keep_alive_interval_s.value_or(LaunchConfig{}.heartbeat_interval_s);
    if (ctx.keep_alive_interval_s) cl.settings.emplace_back("heartbeat_interval_s", fmt::format("{}", interval));
    cl.settings.emplace_back("heartbeat_timeout_s", fmt::format("{}", interval * ctx.keep_alive_attempts.value_or(3)));
  }
}

}  // namespace

void add_flags(CLI::App& app, std::map<const CLI::Option*, const OptionSpec*>& options,
               const std::set<const OptionSpec*>* only) {
  for (const OptionSpec* row : flags_by_group()) {
    if (only && !only->count(row)) continue;
    const OptionSpec& flag = *row;
    std::string help(flag.help);
    if (!flag.pet.empty()) help += fmt::format(" [{}]", flag.pet);
    CLI::Option* option = flag.kind == ValueKind::Switch
                              ? app.add_flag(std::string(flag.names))->description(help)
                              : app.add_option(std::string(flag.names))->description(help)->type_name(std::string(flag.value_name));
    option->group(std::string(group_title(flag.group)));
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    options[option] = &flag;
  }
}

CommandLine parse_command_line(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  CommandLine cl;
  std::size_t first = 0;
  if (!args.empty() && args[0] == "doctor") cl.subcommand = Subcommand::Doctor, first = 1;
  else if (!args.empty() && args[0] == "status") cl.subcommand = Subcommand::Status, first = 1;
  else if (!args.empty() && args[0] == "stacks") cl.subcommand = Subcommand::Stacks, first = 1;
  else if (!args.empty() && args[0] == "debug") cl.subcommand = Subcommand::Debug, first = 1;
  else if (!args.empty() && args[0] == "timeline") cl.subcommand = Subcommand::Timeline, first = 1;
  else if (!args.empty() && args[0] == "tail") cl.subcommand = Subcommand::Tail, first = 1;
  SplitArguments split = split_arguments(args, first, cl);
  cl.program = std::move(split.program);
  cl.options = split.options;

  CLI::App app;
  app.set_help_flag();  // -h/--help is a row of the table
  std::map<const CLI::Option*, const OptionSpec*> options;
  // split_arguments named every flag CLI11 will see by its primary name; the others cannot
  // occur, so they are not built.
  add_flags(app, options, &split.given);
  std::vector<std::string> reversed(split.options.rbegin(), split.options.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    cl.errors.push_back(fmt::format("{} (see ddplaunch --help)", e.what()));
    return cl;
  }

  FlagContext ctx(cl);
  // PET_* first, so anything on the command line (a flag or --set) overrides it.
  for (const OptionSpec& flag : flag_table()) {
    if (flag.pet.empty()) continue;
    auto it = env.find(std::string(flag.pet));
    if (it == env.end() || it->second.empty()) continue;
    if (split.given.count(&flag)) {
      cl.notes.push_back(fmt::format("--{} on the command line overrides {}={}", primary_name(flag), flag.pet, it->second));
      continue;
    }
    std::string value = it->second;
    if (flag.kind == ValueKind::Switch) value = value == "0" || value == "false" ? "false" : "true";
    ctx.source = fmt::format("{}={}", flag.pet, it->second);
    apply_flag_value(flag, value, ctx);
    cl.notes.push_back(fmt::format("{}={} from the environment (torchrun's fallback for --{})", flag.pet, it->second,
                                   primary_name(flag)));
  }
  // Then the flags, in the order given.
  std::map<const CLI::Option*, std::size_t> seen;
  for (const CLI::Option* option : app.parse_order()) {
    const OptionSpec& flag = *options.at(option);
    const std::size_t occurrence = seen[option]++;
    const auto& results = option->results();
    if (occurrence >= results.size()) continue;
    ctx.source = "--" + primary_name(flag);
    apply_flag_value(flag, results[occurrence], ctx);
  }
  combine(ctx);
  return cl;
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    if (entry.rfind("PET_", 0) != 0) continue;
    auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return parse_command_line(args, env);
}

}  // namespace ddplaunch
