// `ddplaunch debug`: the job's debug console from any terminal. It proves the job's token to
// the master once, over the one connection it holds (console_master_link.h), shows what the
// console prints (its transcript: each read waits at the master until there is something new,
// at most kReadWait; made printable, line breaks kept: neither the master nor a rank can drive
// this terminal) with the console's prompt kept below it, and sends each typed line (its own
// lines' echoes are not shown again). Off a terminal it reads plain lines from stdin
// (scripts), each cut at the console's bound. A dropped read is asked again for a few seconds;
// it ends when the master is gone after that (the job ended), or said no (a refusal, exit
// status 1).
#pragma once

#include <cstdint>
#include <string>

namespace ddplaunch {

struct RemoteConsoleTarget {
  std::string host;
  std::uint16_t port = 0;
  std::string job_id;
  std::string token;
  int gdb_rank = -1;  // >= 0: ask for gdb on that rank at once (`ddplaunch debug --gdb R`)
};

// The exit status for the command: 0 when the job ended (or was left with Ctrl-C / EOF), 1
// when the master could not be reached at first or refused.
int run_remote_console(const RemoteConsoleTarget& target);

}  // namespace ddplaunch
