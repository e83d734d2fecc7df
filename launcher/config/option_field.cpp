// Writing a config member as YAML text (the reader is yaml_config.cpp's, through yaml-cpp).
#include "config/option_field.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ddplaunch/base/overloaded.h"

namespace ddplaunch {

std::string field_text(const Field& field, const LaunchConfig& config) {
  // The accessors take a mutable config so that one accessor serves reading and writing;
  // nothing here writes through it.
  auto& c = const_cast<LaunchConfig&>(config);
  return std::visit(
      Overloaded{
          [](std::monostate) { return std::string(); },
          [&](int& (*get)(LaunchConfig&)) { return fmt::format("{}", get(c)); },
          [&](double& (*get)(LaunchConfig&)) { return fmt::format("{}", get(c)); },
          [&](bool& (*get)(LaunchConfig&)) { return std::string(get(c) ? "true" : "false"); },
          [&](std::string& (*get)(LaunchConfig&)) { return get(c).empty() ? std::string("\"\"") : get(c); },
          [&](std::vector<int>& (*get)(LaunchConfig&)) { return fmt::format("[{}]", fmt::join(get(c), ", ")); },
          [&](RestartOnField get) {
            const RestartSettings& r = get(c);
            std::vector<std::string> on;
            if (r.on_init_failure) on.emplace_back("init");
            if (r.on_runtime_failure) on.emplace_back("runtime");
            return fmt::format("[{}]", fmt::join(on, ", "));
          },
          [&](ChoiceField choice) {
            std::string text = choice.text(config);
            return text.empty() ? std::string("\"\"") : text;
          },
      },
      field);
}

bool is_list(const Field& field) {
  return std::holds_alternative<std::vector<int>& (*)(LaunchConfig&)>(field) ||
         std::holds_alternative<RestartOnField>(field);
}

}  // namespace ddplaunch
