// The state key's envelope and the sealed coordinator address (saved_run.h).
#include "seat/saved_run.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ddplaunch/rendezvous/token_proof.h"

namespace ddplaunch {

namespace {

constexpr std::string_view kMacSeparator = "#mac=";

// HMAC(token, label | key | text): bound to what it seals and where it is stored.
std::string mac_of(std::string_view label, std::string_view token, std::string_view key, std::string_view text) {
  std::string message;
  message.reserve(label.size() + key.size() + text.size() + 2);
  message.append(label).append("|").append(key).append("|").append(text);
  return rendezvous::to_hex(rendezvous::hmac_sha256(token, message));
}

std::string state_mac(std::string_view token, std::string_view key, std::string_view run, std::string_view policy) {
  return mac_of("ddplaunch-state-v1", token, key, std::string(run) + "|" + std::string(policy));
}

// The run and policy of a well-formed envelope (sealed right, when there is a token).
struct Opened {
  std::optional<SavedRun> saved;
  std::string why_not;  // when !saved
};

Opened open_saved_run(std::string_view value, std::string_view token, std::string_view key) {
  nlohmann::json document = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || !document.contains("run") || !document["run"].is_string() ||
      !document.contains("policy") || !document["policy"].is_string())
    return {std::nullopt, "it is not a ddplaunch run's state (no run named in it)"};
  SavedRun saved{document["run"].get<std::string>(), document["policy"].get<std::string>()};
  if (!token.empty()) {
    const std::string mac = document.contains("mac") && document["mac"].is_string() ? document["mac"].get<std::string>()
                                                                                     : "";
    if (!rendezvous::equal_constant_time(mac, state_mac(token, key, saved.run, saved.policy)))
      return {std::nullopt, "it is not sealed with this job's token (written by something other than a launcher of "
                            "this job, or under another token)"};
  }
  return {std::move(saved), ""};
}

}  // namespace

std::string seal_saved_run(const SavedRun& saved, std::string_view token, std::string_view key) {
  nlohmann::json document{{"run", saved.run}, {"policy", saved.policy}};
  if (!token.empty()) document["mac"] = state_mac(token, key, saved.run, saved.policy);
  return document.dump();
}

TakeOver take_over_saved_run(const std::optional<std::string>& value, std::string_view known_run,
                             std::string_view token, std::string_view key,
                             const std::function<std::string()>& new_run) {
  TakeOver out;
  out.run = known_run.empty() ? new_run() : std::string(known_run);
  if (!value) return out;  // the run's first coordinator, or its state was removed at its end
  Opened opened = open_saved_run(*value, token, key);
  if (!opened.saved && !token.empty() && !known_run.empty()) {
    out.refusal = fmt::format(
        "etcd holds a state under {} that this launcher cannot trust: {}. Someone who can write to etcd replaced this "
        "run's state; resuming without it would restart the job at generation 0 with full restart budgets in the "
        "middle of the run, so this launcher does not coordinate and the job ends here. Find who writes under {} in "
        "etcd, then start the job again with a new --rdzv-id",
        key, opened.why_not, key.substr(0, key.rfind('/') + 1));
    return out;
  }
  if (!opened.saved) {
    out.note = fmt::format("etcd holds a state under {} that this launcher does not resume: {}. The job starts "
                           "afresh (generation 0, full restart budgets) and overwrites it",
                           key, opened.why_not);
    return out;
  }
  if (opened.saved->run == out.run) {
    out.policy = std::move(opened.saved->policy);
    return out;
  }
  out.note = fmt::format("etcd holds the state of another run under {} (run {}…{}): a finished or crashed run "
                         "that used the same --rdzv-id. This run does not resume it: it starts afresh (generation 0, "
                         "full restart budgets) and overwrites it. Give each run its own --rdzv-id",
                         key, opened.saved->run.substr(0, 8),
                         known_run.empty() ? "; this launcher took part in no run yet" : "");
  return out;
}

std::string seal_coordinator_address(std::string_view address, std::string_view token, std::string_view key) {
  if (token.empty()) return std::string(address);
  return std::string(address) + std::string(kMacSeparator) + mac_of("ddplaunch-coordinator-v1", token, key, address);
}

std::optional<std::string> open_coordinator_address(std::string_view value, std::string_view token,
                                                    std::string_view key) {
  const auto separator = value.rfind(kMacSeparator);
  const std::string_view address = separator == std::string_view::npos ? value : value.substr(0, separator);
  if (token.empty()) return std::string(address);
  if (separator == std::string_view::npos) return std::nullopt;
  const std::string_view mac = value.substr(separator + kMacSeparator.size());
  if (!rendezvous::equal_constant_time(mac, mac_of("ddplaunch-coordinator-v1", token, key, address)))
    return std::nullopt;
  return std::string(address);
}

}  // namespace ddplaunch
