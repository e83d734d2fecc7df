// StackRequests through its seams, with no rank to interrupt (none spawned, or exited): a
// request is answered with the node's stacks, stamped with the generation and the request;
// requests that come while a collection runs are answered by it, each with its own id; a node
// that ended answers nothing.
#include <gtest/gtest.h>

#include <chrono>

#include <boost/asio/io_context.hpp>

#include "agent/stack_requests.h"
#include "recording_master_link.h"
#include "wire/launcher_messages.h"
#include "worker_test_access.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;

TEST(StackRequests, ARequestIsAnsweredStampedWithTheGenerationAndTheRequest) {
  FakeNode node(2, 4, Generation{7});  // never spawned: nothing to interrupt
  node.view.rank_of_node = 1;
  WorkerTestAccess::set_pid(*node.view.ranks[1], 999999);
  WorkerTestAccess::set_status(*node.view.ranks[1], ExitStatus{false, 1, 0, false});  // exited: not read
  StackRequests requests(node.io, "node-b", node.view, node.master);
  requests.on_request(41, "/nonexistent");
  node.run_until([&] { return !node.master.sent.empty(); });
  ASSERT_EQ(node.master.count(messages::Kind::RankStacks), 1);
  EXPECT_EQ(node.master.sent[0].generation, Generation{7});
  auto reply = messages::decode_rank_stacks(node.master.sent[0]);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->request, 41);
  EXPECT_EQ(reply->host, "node-b");
  EXPECT_TRUE(reply->stacks.empty()) << "no rank of this node runs";
}

TEST(StackRequests, RequestsDuringACollectionAreAnsweredByIt) {
  FakeNode node(2, 4, Generation{7});  // never spawned: nothing to interrupt
  node.view.rank_of_node = 1;
  StackRequests requests(node.io, "node-b", node.view, node.master);
  requests.on_request(1, "/nonexistent");
  requests.on_request(2, "/nonexistent");  // the loop has not run: the first collection is still out
  node.run_until([&] { return node.master.sent.size() >= 2; });
  node.io.restart();
  node.io.run_for(50ms);  // nothing more comes
  ASSERT_EQ(node.master.count(messages::Kind::RankStacks), 2);
  EXPECT_EQ(messages::decode_rank_stacks(node.master.sent[0])->request, 1);
  EXPECT_EQ(messages::decode_rank_stacks(node.master.sent[1])->request, 2);

  requests.on_request(3, "/nonexistent");  // the next request: a collection of its own
  node.run_until([&] { return node.master.sent.size() >= 3; });
  ASSERT_EQ(node.master.count(messages::Kind::RankStacks), 3);
  EXPECT_EQ(messages::decode_rank_stacks(node.master.sent[2])->request, 3);
}

TEST(StackRequests, ANodeThatEndedAnswersNothing) {
  FakeNode node(2, 4, Generation{7});  // never spawned: nothing to interrupt
  node.view.rank_of_node = 1;
  StackRequests requests(node.io, "node-b", node.view, node.master);
  requests.on_request(1, "/nonexistent");
  node.view.step = NodeState::Finished;  // while the collection ran
  node.io.restart();
  node.io.run_for(300ms);
  EXPECT_TRUE(node.master.sent.empty());
}

}  // namespace
}  // namespace ddplaunch
