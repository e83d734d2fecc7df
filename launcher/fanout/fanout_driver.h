// ddplaunch --hosts / --hostfile: this ddplaunch runs no worker itself. It reads the hosts,
// checks every one of them over ssh (in parallel, bounded) and starts nothing unless all pass,
// picks the master (the first host, at the address ssh reached it on), then runs one
// ddplaunch per host over ssh with a fresh token on its stdin, and relays the job's output.
#pragma once

#include "config/command_line.h"
#include "env/worker_environment.h"

namespace ddplaunch::fanout {

// The exit status for main: the job's (the master node's), or kExitConfigError when a host
// fails its check or the command line is wrong.
int run_fanout(const CommandLine& command_line, const Environment& env);

}  // namespace ddplaunch::fanout
