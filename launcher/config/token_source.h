// Where the rendezvous token comes from besides YAML: a file only its owner can read
// (--token-file), and the command line, whose copy in this process's memory is scrubbed
// so that `ps` and /proc/PID/cmdline never show it.
#pragma once

#include <string>

namespace ddplaunch {

struct TokenFromFile {
  std::string token;  // the file's content without its trailing newline
  std::string error;  // non-empty: why the file is refused, and what to do
};

// Reads a token file: a regular file (symlinks followed), owned by this user, readable by no
// one else (mode 0600 or stricter), not empty, at most 4 KiB.
TokenFromFile read_token_file(const std::string& path);

// The same checks for another secret's file; its first line is the secret. `label` names the
// file in messages ("--rdzv-conf password_file"), `what` the secret ("the etcd password").
TokenFromFile read_secret_first_line(const std::string& path, const std::string& label, const std::string& what);

// Why `token` is easy to guess ("" when it is not): under 16 characters, or under 8 different
// characters. Anyone who reaches the rendezvous port may try tokens; a weak one is warned
// about (a refusal would break every short token of existing job scripts).
std::string token_weakness(const std::string& token);

// Overwrites the values of `--token V`, `--token=V` and `--set token=V` in argv's memory
// (up to a `--` that starts the program). Call it first in main, before any fork: a child
// forked later copies the clean memory.
void scrub_token_arguments(int argc, char** argv);

// The launcher's secrets given in its environment (the rendezvous token, the etcd password):
// never passed to the workers, never forwarded over ssh.
inline constexpr const char* kSecretVariables[] = {"DDPLAUNCH_TOKEN", "DDPLAUNCH_ETCD_PASSWORD"};
// Overwrites their values in this process's environment block in place, which is what
// /proc/PID/environ shows to every process of the user (the workers included). Read the
// environment first (current_environment): getenv sees the overwritten values afterwards.
void scrub_secret_environment();

}  // namespace ddplaunch
