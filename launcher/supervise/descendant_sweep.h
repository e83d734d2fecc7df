// Finding and killing every process started under this launcher's job, including ones
// that left the worker's process group (setsid, setpgid, double fork). Two marks find
// them: the job tag every worker inherits in its environment (survives the launcher),
// and the subreaper tree (orphans of the job reparent to the launcher while it lives).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ddplaunch {

// A fresh random tag for one launcher's workers ("0f3a…", 32 hex digits).
std::string new_job_tag();

// PR_SET_CHILD_SUBREAPER on this process: orphaned descendants reparent to it (and must be
// reaped by it). "" or the reason it failed.
std::string become_subreaper();
bool is_subreaper();

// Every descendant of `root` (children of each of its threads, recursively; breadth first,
// bounded), except `pruned` and what lies below them. Reads /proc/PID/task/*/children only.
std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& pruned);

// Processes of the job still alive: when this process is a subreaper, its descendants (the
// whole job while it lives: nothing else on the machine is read); otherwise (the guard,
// after the launcher died) every process whose environment carries `tag`. Never this
// process, nor `spared` and their descendants. Zombies do not count.
std::vector<pid_t> find_job_processes(const std::string& tag, const std::vector<pid_t>& spared);

// `pid` is `ancestor` or below it (the parent chain in /proc, at most 64 steps). A process
// that was orphaned (reparented) no longer descends from its old ancestor.
bool descends_from(pid_t pid, pid_t ancestor);

// SIGKILLs find_job_processes() in bounded rounds until none is found (a process forking
// while it is swept is caught in the next round). Returns how many kills were sent.
int sweep_job_processes(const std::string& tag, const std::vector<pid_t>& spared);

// Reaps exited children of this subreaper that are not in `keep` (adopted orphans the
// launcher never started and must not mistake for workers). Never blocks.
void reap_adopted_children(const std::vector<pid_t>& keep);

}  // namespace ddplaunch
