// Config keys whose text is a choice, not a plain value: how the option table reads, writes
// and explains them (worker_port: "auto" or a port; nproc_per_node: a number or a word;
// numa_binding: none or a torchrun mode; hang.history_file: a path or off; redirects and tee:
// torchrun's stream specs).
#pragma once

#include <string>
#include <string_view>

#include "config/launch_config.h"
#include "config/option_field.h"
#include "placement/cpu_placement.h"

namespace ddplaunch {

// worker_port: "auto" or 1..65535.
constexpr Field worker_port_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) { return c.worker_port.fixed ? std::to_string(*c.worker_port.fixed) : std::string("auto"); },
      +[](LaunchConfig& c, std::string_view text) {
        if (text == "auto") {
          c.worker_port.fixed.reset();
          return true;
        }
        auto port = parse_port_text(text);
        if (port) c.worker_port.fixed = *port;
        return port.has_value();
      },
      +[] { return std::string("auto or 1..65535"); },
  };
}

// A member whose type brings its own reader, writer and description (nproc_per_node's
// NprocRequest, -r/-t's StreamSpec): parsed_field<&LaunchConfig::tee, parse_stream_spec,
// stream_spec_text, stream_spec_choices>().
template <auto Member, auto Parse, auto Text, auto Choices>
constexpr Field parsed_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) { return Text(c.*Member); },
      +[](LaunchConfig& c, std::string_view text) {
        auto value = Parse(text);
        if (value) c.*Member = *value;
        return value.has_value();
      },
      +[] { return Choices(); },
  };
}

// hang.history_file: a path, "" (the default file) or off (no history).
constexpr Field history_file_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) { return c.history_file.off ? std::string("off") : c.history_file.path; },
      +[](LaunchConfig& c, std::string_view text) {
        c.history_file.off = text == "off";
        c.history_file.path = c.history_file.off ? std::string() : std::string(text);
        return true;
      },
      +[] { return std::string("a file's path, or off"); },
  };
}

// numa_binding: "" (none) or a torchrun mode name.
constexpr Field numa_binding_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) {
        return c.numa_binding == placement::BindingMode::None ? std::string()
                                                               : std::string(placement::binding_mode_name(c.numa_binding));
      },
      +[](LaunchConfig& c, std::string_view text) {
        auto mode = placement::binding_mode_from_name(text);
        if (mode) c.numa_binding = *mode;
        return mode.has_value();
      },
      +[] { return std::string("node, socket, exclusive or core-complex (\"\" or none: no binding)"); },
  };
}

}  // namespace ddplaunch
