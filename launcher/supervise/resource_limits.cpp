// RLIMIT_NOFILE: soft up to hard.
#include "supervise/resource_limits.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ddplaunch {

std::string raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  if (limit.rlim_cur >= limit.rlim_max) return {};
  const rlim_t soft = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) == 0) return {};
  return fmt::format("could not raise the open-file limit from {} to the hard limit {}: {}; workers keep {} "
                     "(raise it with `ulimit -n` before starting ddplaunch if NCCL runs out of descriptors)",
                     soft, limit.rlim_max, std::strerror(errno), soft);
}

}  // namespace ddplaunch
