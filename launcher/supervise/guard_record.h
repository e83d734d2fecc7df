// One record on the orphan guard's pipe: NUL, an operation letter, its value, newline. The
// launcher writes them (guard_record); the guard reads them (parse_guard_record) while it may
// share the launcher's memory, so the reading side calls nothing in libc: byte loops only.
// A line of text that reached the pipe by mistake (a log line) never starts with NUL, so it is
// never taken for a command.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ddplaunch {

struct GuardRecord {
  enum class Op { None, Watch, Forget, Directory, Swept };
  Op op = Op::None;       // None: not a record, or one the guard ignores
  long group = 0;         // Watch / Forget: a process group, 2 .. 2^31-1
  const char* path = nullptr;  // Directory: the path's bytes (not NUL-terminated), inside the line
  std::size_t path_size = 0;   // 1 .. max_path-1
};

// The bytes the launcher writes for one record (the newline included).
inline std::string guard_record(char op, std::string_view value) {
  std::string record(1, '\0');
  record += op;
  record += value;
  record += '\n';
  return record;
}

// One line without its newline. Libc-free.
inline GuardRecord parse_guard_record(const char* line, std::size_t length, std::size_t max_path) {
  GuardRecord r;
  if (length < 2 || line[0] != '\0') return r;
  const char* record = line + 1;
  const std::size_t size = length - 1;
  if (size == 1 && record[0] == 's') {
    r.op = GuardRecord::Op::Swept;
    return r;
  }
  if (size < 2) return r;
  if (record[0] == 'd') {
    if (size - 1 >= max_path) return r;
    r.op = GuardRecord::Op::Directory;
    r.path = record + 1;
    r.path_size = size - 1;
    return r;
  }
  if (record[0] != '+' && record[0] != '-') return r;
  long value = 0;
  for (std::size_t i = 1; i < size; ++i) {
    if (record[i] < '0' || record[i] > '9' || value >= (1L << 31)) return r;  // digits only, bounded
    value = value * 10 + (record[i] - '0');
  }
  if (value <= 1 || value >= (1L << 31)) return r;
  r.op = record[0] == '+' ? GuardRecord::Op::Watch : GuardRecord::Op::Forget;
  r.group = value;
  return r;
}

}  // namespace ddplaunch
