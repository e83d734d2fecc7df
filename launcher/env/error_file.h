// The error files of torch's @record (torch.distributed.elastic.multiprocessing.errors): where
// each worker writes its uncaught exception (TORCHELASTIC_ERROR_FILE, one fresh file per rank
// and generation in the launcher's private directory), and a short summary read back from one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ddplaunch/rendezvous/generation.h"

namespace ddplaunch {

// "<dir>/error-rank<R>-gen<G>.json": what the worker gets as TORCHELASTIC_ERROR_FILE.
std::string error_file_path(const std::string& dir, int global_rank, Generation generation);

inline constexpr std::size_t kMaxErrorFileRead = 64 * 1024;  // bytes read from one file
inline constexpr std::size_t kErrorSummaryFrames = 4;        // traceback frames kept

// A few lines for a failure report: "<ExceptionType>: <message>" (cut at 500 bytes), then the
// last kErrorSummaryFrames frames of the Python traceback (`File "...", line N, in f` and its
// source line). Reads at most kMaxErrorFileRead bytes. Understands torch's format
//   {"message": {"message": "Type: text", "extraInfo": {"py_callstack": "...", "timestamp": "..."}}}
// and "message" as a plain string. nullopt when the file is missing, empty, or not such JSON
// (a cut-off file still yields its message when one can be read).
std::optional<std::string> summarize_error_file(const std::string& path);

}  // namespace ddplaunch
