// spdlog configuration shared by every part of the launcher.
#include "log_setup.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ddplaunch {

void init_logging() {
  auto logger = spdlog::stderr_color_mt("ddplaunch");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%H:%M:%S.%e ddplaunch %^%l%$: %v");
  spdlog::set_level(spdlog::level::info);
}

void set_log_node(int node_rank, int node_count) {
  if (node_count > 1)
    spdlog::set_pattern(fmt::format("%H:%M:%S.%e ddplaunch[node {}] %^%l%$: %v", node_rank));
}

}  // namespace ddplaunch
