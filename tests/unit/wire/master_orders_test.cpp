// decode_master_order: every master → node kind becomes its own alternative with its payload;
// what nodes send the master, unknown types and malformed payloads are no order.
#include <gtest/gtest.h>

#include <variant>

#include "wire/master_orders.h"

namespace ddplaunch::messages {
namespace {

// The message's order as `Payload` (a default one, with the test failed, when it is not).
template <typename Payload>
Payload decoded_as(const rendezvous::Message& m) {
  const std::optional<MasterOrder> order = decode_master_order(m);
  const Payload* payload = order ? std::get_if<Payload>(&*order) : nullptr;
  EXPECT_NE(payload, nullptr) << m.type << (order ? " decoded as another kind" : " decoded as no order");
  return payload ? *payload : Payload{};
}

TEST(MasterOrders, EachMasterKindDecodesToItsOwnPayload) {
  EXPECT_EQ(decoded_as<Restart>(encode(Generation{3}, Restart{"rank 2 failed"})).reason, "rank 2 failed");
  EXPECT_EQ(decoded_as<Stop>(encode(Generation{3}, Stop{"budget spent", 7})).exit_code, 7);
  EXPECT_EQ(decoded_as<JobEnd>(encode(Generation{3}, JobEnd{4})).exit_code, 4);
  decoded_as<Resume>(encode_resume(Generation{3}));
  EXPECT_EQ(decoded_as<ProbeVerdict>(encode(Generation{0}, ProbeVerdict{"eth1"})).ifname, "eth1");
  EXPECT_EQ(decoded_as<Standby>(encode(Generation{0}, Standby{"spare", "0a1b"})).run_nonce, "0a1b");
  EXPECT_EQ(decoded_as<OutputFilter>(encode(Generation{1}, OutputFilter{{2, 5}})).ranks, (std::vector<int>{2, 5}));
  EXPECT_EQ(decoded_as<FollowRank>(encode(Generation{1}, FollowRank{6, 30})).rank, 6);
  EXPECT_EQ(decoded_as<CollectStacks>(encode(Generation{1}, CollectStacks{12})).request, 12);
  EXPECT_EQ(decoded_as<DebugInput>(encode(Generation{1}, DebugInput{3, "next"})).line, "next");
  EXPECT_EQ(decoded_as<DebugAttachGdb>(encode(Generation{1}, DebugAttachGdb{9})).rank, 9);
}

TEST(MasterOrders, WhatNodesSendUnknownTypesAndMalformedPayloadsAreNoOrder) {
  EXPECT_FALSE(decode_master_order(encode(Generation{1}, NodeFinished{0, "done"})));
  EXPECT_FALSE(decode_master_order(rendezvous::Message{"no_such_kind", Generation{1}, {}}));
  EXPECT_FALSE(decode_master_order(rendezvous::Message{"debug_input", Generation{1}, {{"rank", "not a number"}}}));
}

}  // namespace
}  // namespace ddplaunch::messages
