// Finding a running job without detective work: every launcher writes a private record of
// its job on its node (job id, the master's rendezvous address, and the token when ddplaunch
// made it — a fan-out's or ddplaunch-srun's, which nobody was shown), removed when it ends
// (by the orphan guard when the launcher was killed). `ddplaunch status|stacks|debug` with
// no --master read them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddplaunch/base/result.h"

namespace ddplaunch {

struct JobRecord {
  std::string job_id;
  std::string master;  // HOST:PORT of the job's rendezvous
  std::string token;   // "" unless ddplaunch made it
  long pid = 0;        // the launcher that wrote it
};

// $XDG_RUNTIME_DIR/ddplaunch-jobs when that folder exists, else /tmp/ddplaunch-jobs-<uid>
// (readers look in both); made mode 0700 and refused when another user owns it or it is a
// symbolic link.
Result<std::string> job_record_directory();
std::string format_job_record(const JobRecord& record);
std::optional<JobRecord> parse_job_record(std::string_view text);
// Writes `record` (mode 0600) as <dir>/ddplaunch-<pid>/job; that folder's path (the caller
// removes it at the end, and has the orphan guard remove it if the launcher is killed).
Result<std::string> write_job_record(const JobRecord& record);
void remove_job_record(const std::string& folder);
// Whether the launcher that wrote a record runs still: process `pid` lives and is a ddplaunch
// (a reused pid is another program's).
bool launcher_still_runs(long pid);
// The records of launchers still running on this node (a stale one is removed).
std::vector<JobRecord> running_job_records();

// The tokens this node's records of job `job_id`, or of a job whose master is `master`, keep
// (none empty, none twice): what the launchers' own user may prove to the job's master when no
// token was given. Several where several launchers of the job run here (a loopback job; with
// etcd, each keeps its own).
std::vector<std::string> recorded_tokens(const std::vector<JobRecord>& records, const std::string& job_id,
                                         const std::string& master);

// Why a folder where records may be was refused (another user's, a symbolic link, open to
// others): one message each, naming it and what to do; empty when none was.
std::vector<std::string> refused_job_record_directories();

// The job a subcommand means when no --master was given: the only running one, or the one
// with `job_id`; otherwise an error that lists them, or says there is none (or, when a record
// folder was refused, that none was found and why that folder was not read).
Result<JobRecord> choose_job_record(const std::vector<JobRecord>& records, const std::string& job_id,
                                    const std::vector<std::string>& refused_directories = {});

}  // namespace ddplaunch
