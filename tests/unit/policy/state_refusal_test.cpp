// The job policy's state document refused: another version, other settings, text
// that is not JSON, a field missing or of the wrong type anywhere — each with a message that
// names what is wrong, never a crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/job_policy.h"
#include "policy/policy_state.h"
#include "policy_decisions.h"
#include "policy_stories.h"

namespace ddplaunch {
namespace {

using namespace testing;
using Json = nlohmann::json;

std::string saved_mid_membership_restart() { return policy_mid_membership_restart().save_state(t0 + 30s); }

std::string refusal(const std::string& document, const PolicySettings& s = membership_settings(2, 2, 1)) {
  auto restored = JobPolicy::restore_state(s, document, t0);
  return restored ? "(restored)" : restored.error;
}

TEST(PolicyStateRefusal, AnotherVersionIsRefusedNamingBoth) {
  Json doc = Json::parse(saved_mid_membership_restart());
  doc["version"] = kPolicyStateVersion + 1;
  const std::string why = refusal(doc.dump());
  EXPECT_NE(why.find("cannot restore the job's policy state: the document is version " +
                     std::to_string(kPolicyStateVersion + 1) + ", this launcher reads version " +
                     std::to_string(kPolicyStateVersion) + " only: run the same ddplaunch version on every launcher"),
            std::string::npos)
      << why;
  doc.erase("version");
  EXPECT_EQ(refusal(doc.dump()), "cannot restore the job's policy state: 'version' is missing");
}

TEST(PolicyStateRefusal, OtherRestartBudgetsOrAnotherMembershipShapeAreRefused) {
  const std::string saved = saved_mid_membership_restart();
  PolicySettings budgets = membership_settings(2, 2, 1);
  budgets.restart.max_restarts = 5;
  const std::string why = refusal(saved, budgets);
  EXPECT_NE(why.find("it was saved under other settings (init_restarts 1, max_restarts 1, nodes 2:2, spares 1) than "
                     "this launcher's (init_restarts 1, max_restarts 5, nodes 2:2, spares 1)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("--max-restarts"), std::string::npos) << why;
  EXPECT_NE(refusal(saved, membership_settings(2, 3, 1)).find("nodes 2:3, spares 1"), std::string::npos);
  EXPECT_NE(refusal(saved, membership_settings(2, 2, 0)).find("spares 0"), std::string::npos);
  EXPECT_NE(refusal(saved, settings()).find("membership off"), std::string::npos);
  // What is not in the fingerprint is the new coordinator's own: a longer backoff is fine.
  PolicySettings backoff = membership_settings(2, 2, 1);
  backoff.restart.backoff_s = 9;
  EXPECT_EQ(refusal(saved, backoff), "(restored)");
}

TEST(PolicyStateRefusal, WhatIsNotAJsonObjectIsRefused) {
  EXPECT_NE(refusal("").find("the document is not JSON ("), std::string::npos) << refusal("");
  EXPECT_NE(refusal("{\"version\": 1,").find("the document is not JSON ("), std::string::npos);
  EXPECT_EQ(refusal("[1, 2]"), "cannot restore the job's policy state: the document is not a JSON object");
  EXPECT_EQ(refusal("42"), "cannot restore the job's policy state: the document is not a JSON object");
  EXPECT_EQ(refusal("{\"version\": \"1\"}"),
            "cannot restore the job's policy state: 'version' should be a whole number, not \"1\"");
  // Nested deep: refused like any other, neither parsing nor printing it overflows the stack.
  EXPECT_NE(refusal("{\"version\": " + std::string(100000, '[') + "}").find("the document is not JSON ("),
            std::string::npos);
  EXPECT_EQ(refusal("{\"version\": " + std::string(100000, '[') + std::string(100000, ']') + "}"),
            "cannot restore the job's policy state: 'version' should be a whole number, not a list of 1");
}

TEST(PolicyStateRefusal, EveryTruncationIsRefusedAsNotJson) {
  const std::string saved = saved_mid_membership_restart();
  for (std::size_t size = 0; size < saved.size(); size += 3) {
    const std::string why = refusal(saved.substr(0, size));
    ASSERT_NE(why.find("the document is not JSON"), std::string::npos) << size << ": " << why;
  }
}

// Every place in a document, as the reader names it ("tracker.ranks[2].since").
void places(const Json& json, const std::string& path, std::vector<std::pair<Json::json_pointer, std::string>>& out,
            const Json::json_pointer& pointer = Json::json_pointer()) {
  if (json.is_object())
    for (const auto& [key, value] : json.items()) {
      const std::string where = path.empty() ? key : path + "." + key;
      out.emplace_back(pointer / key, where);
      places(value, where, out, pointer / key);
    }
  if (json.is_array())
    for (std::size_t i = 0; i < json.size(); ++i) {
      const std::string where = path + "[" + std::to_string(i) + "]";
      out.emplace_back(pointer / i, where);
      places(json[i], where, out, pointer / i);
    }
}

TEST(PolicyStateRefusal, AValueOfTheWrongTypeAnywhereIsRefusedNamingItsPlace) {
  const Json saved = Json::parse(saved_mid_membership_restart());
  std::vector<std::pair<Json::json_pointer, std::string>> all;
  places(saved, "", all);
  ASSERT_GT(all.size(), 200u);  // the document has something in most fields
  for (const auto& [pointer, where] : all) {
    Json damaged = saved;
    damaged[pointer] = damaged[pointer].is_string() ? Json(42) : Json("wrong");
    const std::string why = refusal(damaged.dump());
    EXPECT_NE(why.find("cannot restore the job's policy state: '" + where + "' should be"), std::string::npos)
        << where << ": " << why;
  }
}

TEST(PolicyStateRefusal, AMissingFieldAnywhereIsRefusedNamingIt) {
  const Json saved = Json::parse(saved_mid_membership_restart());
  std::vector<std::pair<Json::json_pointer, std::string>> all;
  places(saved, "", all);
  int missing = 0;
  for (const auto& [pointer, where] : all) {
    if (!saved[pointer.parent_pointer()].is_object()) continue;  // list items are not fields
    Json damaged = saved;
    damaged[pointer.parent_pointer()].erase(pointer.back());
    EXPECT_EQ(refusal(damaged.dump()), "cannot restore the job's policy state: '" + where + "' is missing");
    ++missing;
  }
  EXPECT_GT(missing, 100);
}

TEST(PolicyStateRefusal, ADamagedRandomEngineOrAnAbsurdTimeIsRefused) {
  Json doc = Json::parse(saved_mid_membership_restart());
  Json engine = doc;
  engine["rng"] = "1 2 3";
  EXPECT_NE(refusal(engine.dump()).find("'rng' is not a random engine's state"), std::string::npos);
  engine["rng"] = doc["rng"].get<std::string>() + " 9";
  EXPECT_NE(refusal(engine.dump()).find("'rng' is not a random engine's state"), std::string::npos);
  Json time = doc;
  time["generation_started"] = 4'000'000'000'000'000LL;
  EXPECT_NE(refusal(time.dump()).find("'generation_started' is 4000000000000000, outside"), std::string::npos)
      << refusal(time.dump());
  Json phase = doc;
  phase["phase"] = "sleeping";
  EXPECT_EQ(refusal(phase.dump()), "cannot restore the job's policy state: 'phase' should be a known name, not \"sleeping\"");
}

TEST(PolicyStateRefusal, MembershipStateThatDoesNotMatchTheFingerprintIsRefused) {
  Json doc = Json::parse(saved_mid_membership_restart());
  doc["membership"] = nullptr;
  EXPECT_NE(refusal(doc.dump()).find("'membership' does not match"), std::string::npos) << refusal(doc.dump());
  JobPolicy plain(settings());
  Json without = Json::parse(plain.save_state(t0));
  without["membership"] = doc["tracker"];  // any object
  EXPECT_NE(refusal(without.dump(), settings()).find("'membership' is saved, but these settings have no place for it"),
            std::string::npos)
      << refusal(without.dump(), settings());
}

}  // namespace
}  // namespace ddplaunch
