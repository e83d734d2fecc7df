// The apply functions the option table names (see flag_values.cpp), and the one path every
// flag value takes; internal to config/.
#pragma once

#include <string>

#include "config/option_table.h"

namespace ddplaunch {

// Checks `value` by the flag's kind and its key's range, then applies it (its apply
// function, or its key). The one path for command-line values and PET_* fallbacks alike.
void apply_flag_value(const OptionSpec& flag, const std::string& value, FlagContext& context);

void apply_nnodes(const std::string& value, FlagContext& context);
void apply_nproc(const std::string& value, FlagContext& context);
void apply_endpoint(const std::string& value, FlagContext& context);
void apply_master_addr(const std::string& value, FlagContext& context);
void apply_master_port(const std::string& value, FlagContext& context);
void apply_rdzv_backend(const std::string& value, FlagContext& context);
void apply_rdzv_conf(const std::string& value, FlagContext& context);
void apply_monitor_interval(const std::string& value, FlagContext& context);
void apply_start_method(const std::string& value, FlagContext& context);
void apply_redirects(const std::string& value, FlagContext& context);
void apply_tee(const std::string& value, FlagContext& context);
void apply_local_ranks_filter(const std::string& value, FlagContext& context);
void apply_ranks_filter(const std::string& value, FlagContext& context);
void apply_no_collapse(const std::string& value, FlagContext& context);
void apply_local_addr(const std::string& value, FlagContext& context);
void apply_signals(const std::string& value, FlagContext& context);
void apply_numa_binding(const std::string& value, FlagContext& context);
void apply_set(const std::string& value, FlagContext& context);
void apply_config(const std::string& value, FlagContext& context);
void apply_dry_run(const std::string& value, FlagContext& context);
void apply_no_peer_probe(const std::string& value, FlagContext& context);
void apply_help(const std::string& value, FlagContext& context);
void apply_version(const std::string& value, FlagContext& context);
void apply_print_default_config(const std::string& value, FlagContext& context);
void apply_man(const std::string& value, FlagContext& context);
void apply_python(const std::string& value, FlagContext& context);
void apply_gdb_rank(const std::string& value, FlagContext& context);
void apply_tail_rank(const std::string& value, FlagContext& context);
void apply_status_watch(const std::string& value, FlagContext& context);
void apply_status_json(const std::string& value, FlagContext& context);
void apply_module(const std::string& value, FlagContext& context);
void apply_no_python(const std::string& value, FlagContext& context);
void apply_run_path(const std::string& value, FlagContext& context);
// Fan-out: they only record what was asked; launcher/fanout/ reads and checks the hosts.
void apply_hosts(const std::string& value, FlagContext& context);
void apply_hostfile(const std::string& value, FlagContext& context);
void apply_include(const std::string& value, FlagContext& context);
void apply_exclude(const std::string& value, FlagContext& context);
void apply_export(const std::string& value, FlagContext& context);
void apply_env_file(const std::string& value, FlagContext& context);
void apply_token_stdin(const std::string& value, FlagContext& context);
void apply_env_stdin(const std::string& value, FlagContext& context);
void apply_stop_on_stdin_eof(const std::string& value, FlagContext& context);

}  // namespace ddplaunch
