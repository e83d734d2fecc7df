// The LaunchConfig member a config key sets, as a value of the option table: an accessor
// per member type, so nested members (timeout.base_s) and members kept outside their YAML
// section (hang.action → LaunchConfig::hang_action) read alike, and a reader or writer
// that forgets a type does not compile (std::visit).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/launch_config.h"

namespace ddplaunch {

// restart.restart_on is the one list of words: it is RestartSettings' two on_*_failure bools.
using RestartOnField = RestartSettings& (*)(LaunchConfig&);

// A member that holds one of a few named values (an enum; the worker port: auto or a number),
// parsed into its type once, here, whatever the source (YAML, a flag, --set, a hint).
struct ChoiceField {
  std::string (*text)(const LaunchConfig&);              // as YAML writes it ("" for none)
  bool (*set)(LaunchConfig&, std::string_view);          // false: not one of the choices
  std::string (*choices)();                              // "report, restart, stop or auto"
};

using Field = std::variant<std::monostate,  // a flag that sets no key
                           int& (*)(LaunchConfig&), double& (*)(LaunchConfig&), bool& (*)(LaunchConfig&),
                           std::string& (*)(LaunchConfig&), std::vector<int>& (*)(LaunchConfig&), RestartOnField,
                           ChoiceField>;

// field<&LaunchConfig::nodes>(), field<&LaunchConfig::init_deadline, &InitDeadlineFormula::base_s>().
template <auto Member>
constexpr Field field() {
  return +[](LaunchConfig& c) -> auto& { return c.*Member; };
}
template <auto Section, auto Member>
constexpr Field field() {
  return +[](LaunchConfig& c) -> auto& { return (c.*Section).*Member; };
}
// An enum member named by its NameTable: choice_field<&LaunchConfig::shim, kShimChoiceNames>().
template <auto Member, const auto& Names>
constexpr Field choice_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) { return std::string(Names.name(c.*Member)); },
      +[](LaunchConfig& c, std::string_view text) {
        auto value = Names.parse(text);
        if (value) c.*Member = *value;
        return value.has_value();
      },
      +[] { return Names.listed(); },
  };
}
// The same for a member of a section: choice_field<&LaunchConfig::etcd, &EtcdConfig::protocol,
// kEtcdProtocolNames>().
template <auto Section, auto Member, const auto& Names>
constexpr Field choice_field() {
  return ChoiceField{
      +[](const LaunchConfig& c) { return std::string(Names.name((c.*Section).*Member)); },
      +[](LaunchConfig& c, std::string_view text) {
        auto value = Names.parse(text);
        if (value) (c.*Section).*Member = *value;
        return value.has_value();
      },
      +[] { return Names.listed(); },
  };
}
constexpr Field restart_on_field() {
  return RestartOnField{+[](LaunchConfig& c) -> RestartSettings& { return c.restart; }};
}

// The member's value as YAML writes it: 1, 0.1, true, "" (empty text), [0, 3], [init, runtime].
// configs/default.yaml shows every key this way, from a default LaunchConfig.
std::string field_text(const Field& field, const LaunchConfig& config);

// Whether the key takes a YAML list (on the command line: comma-separated, or [a, b]).
bool is_list(const Field& field);

}  // namespace ddplaunch
