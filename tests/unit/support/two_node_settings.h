// The settings of a two-node job for the master's unit tests: no run history is read or
// written; the rest is the test's to set.
#pragma once

#include <string>
#include <utility>

#include "master/coordinator_settings.h"

namespace ddplaunch {

inline CoordinatorSettings two_node_settings(std::string job_id) {
  CoordinatorSettings s;
  s.config.job_id = std::move(job_id);
  s.config.nodes = 2;
  s.config.history_file.off = true;
  return s;
}

}  // namespace ddplaunch
