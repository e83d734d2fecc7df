// The documents made from the option table: configs/default.yaml (every key with its
// default, range and flag) and the man page. Printed by `ddplaunch --print-default-config`
// and `ddplaunch --man` rather than by a generator program of their own: the build runs the
// ddplaunch it just linked (no second binary to link on every change of the table), and the
// installed ddplaunch can always say what its own keys are, whatever copy of default.yaml a
// user has. A unit test compares the checked-in configs/default.yaml with default_config_yaml().
#pragma once

#include <string>
#include <string_view>

namespace ddplaunch {

std::string default_config_yaml();

// roff for man(1); `version` goes in its title line (no date: the same build, the same page).
std::string man_page(std::string_view version);

// How a key's flag, environment variable and range read in both documents:
// "flag: --join-timeout; allowed 0.1 to 604800 seconds" ("" when it has none of them).
struct OptionSpec;
std::string key_facts(const OptionSpec& row);

}  // namespace ddplaunch
