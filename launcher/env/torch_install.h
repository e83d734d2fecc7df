// What the launcher knows about the torch its workers will import, found without starting
// Python or importing torch (which takes seconds): the version from torch/version.py in the
// interpreter's site directories. Decides which async NCCL error variable torchrun would set.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "env/worker_environment.h"

namespace ddplaunch {

// The interpreter workers get as PYTHON_EXEC: $PYTHON_EXEC from `base`, else /usr/bin/python3.
std::string default_python_exec(const Environment& base);

// torch.__version__ ("2.3.1+cu121") as the file torch/version.py of `python_exec`'s installation
// states it, looking where that interpreter would import from: $PYTHONPATH entries of `base`,
// the user site, the venv or prefix site-packages, Debian's dist-packages. nullopt when not
// found or not readable (at most a few small file reads; no process is started).
std::optional<std::string> find_torch_version(const std::string& python_exec, const Environment& base);

// False when `command` cannot be a Python program: its first word is a compiled (ELF) program
// and no word names python or a .py file (/bin/true, a C++ binary: torch/version.py of some
// interpreter says nothing about it, so the launch does not read it). True otherwise: a
// script may be a shebang Python one, and `env python3 ...`, `numactl ... python ...` or a
// shell wrapper run Python. Reads at most the first four bytes of the program's file.
bool may_start_python(const std::vector<std::string>& command);

// True for versions >= 2.2 (TORCH_NCCL_ASYNC_ERROR_HANDLING), false for older ones
// (NCCL_ASYNC_ERROR_HANDLING); nullopt when the text is not a version.
std::optional<bool> torch_uses_torch_nccl_prefix(const std::string& version);

}  // namespace ddplaunch
