// Where the worker shims are: the NCCL preload library and the Python autoload folder.
// An installed or copied ddplaunch (<prefix>/bin/ddplaunch) finds them relative to itself,
// so a prefix can be moved or carried to another machine; a build tree uses the paths
// compiled in.
#pragma once

#include <string>

namespace ddplaunch {

struct ShimPaths {
  std::string preload_lib;          // libddplaunch_nccl_preload.so
  std::string python_autoload_dir;  // the folder with sitecustomize.py (its parent holds ddplaunch_shim.py)
};

// Relative layout, from the folder of the running executable (/proc/self/exe):
//   ../lib/ddplaunch/libddplaunch_nccl_preload.so and ../share/ddplaunch/python/autoload.
// Each one found there wins; otherwise the build tree's path compiled in.
ShimPaths locate_shims();

// The same rule for a given executable folder (testable without moving the binary).
ShimPaths locate_shims_from(const std::string& executable_dir);

}  // namespace ddplaunch
