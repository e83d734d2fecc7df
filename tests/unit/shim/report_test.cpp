// report() and the heartbeat: datagrams arrive on a real AF_UNIX socket in the format
// contract.h parses; nothing is sent (and nothing fails) when the channel is not configured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bound_status_socket.h"
#include "ddplaunch/shim.h"
#include "ddplaunch/step_counter.h"

namespace {

namespace c = ddplaunch::contract;
namespace shim = ddplaunch::shim;

// A bound datagram socket in a fresh temp dir, with the worker variables pointing at it.
class StatusSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(socket_.open("/tmp/shim_report_XXXXXX"));
    ::setenv("DDPLAUNCH_STATUS_SOCKET", socket_.path().c_str(), 1);
    ::setenv("RANK", "3", 1);
    ::setenv("DDPLAUNCH_GENERATION", "2", 1);
  }
  void TearDown() override {
    shim::stop_heartbeat();
    ::unsetenv("DDPLAUNCH_STATUS_SOCKET");
    ::unsetenv("RANK");
    ::unsetenv("DDPLAUNCH_GENERATION");
  }
  // The next datagram, or nullopt after `timeout_ms`.
  std::optional<std::string> receive(int timeout_ms) { return socket_.receive(timeout_ms); }
  ddplaunch::testing::BoundStatusSocket socket_;  // closed and removed after TearDown
};

TEST_F(StatusSocket, ReportSendsOneParsableDatagram) {
  shim::report(c::StatusEvent::InitFailed, "ncclCommInitRank failed:\nunhandled cuda error");
  auto line = receive(2000);
  ASSERT_TRUE(line);
  auto m = c::parse_status(*line);
  ASSERT_TRUE(m) << *line;
  EXPECT_EQ(m->event, c::StatusEvent::InitFailed);
  EXPECT_EQ(m->rank, 3);
  EXPECT_EQ(m->generation, 2);
  EXPECT_EQ(m->pid, static_cast<long>(::getpid()));
  EXPECT_EQ(m->detail, "ncclCommInitRank failed: | unhandled cuda error");
  EXPECT_FALSE(receive(50)) << "exactly one datagram per report";
}

TEST_F(StatusSocket, EmptyDetailAndDefaultGeneration) {
  ::unsetenv("DDPLAUNCH_GENERATION");
  shim::report(c::StatusEvent::InitOk);
  auto line = receive(2000);
  ASSERT_TRUE(line);
  auto m = c::parse_status(*line);
  ASSERT_TRUE(m) << *line;
  EXPECT_EQ(m->event, c::StatusEvent::InitOk);
  EXPECT_EQ(m->generation, 0);
  EXPECT_EQ(m->detail, "");
}

TEST_F(StatusSocket, LongDetailIsTruncatedToTheLimit) {
  shim::report(c::StatusEvent::InitFailed, std::string(10000, 'e'));
  auto line = receive(2000);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->size(), c::kMaxStatusBytes);
  EXPECT_TRUE(c::parse_status(*line));
}

TEST_F(StatusSocket, NoDatagramWhenSocketVariableOrRankUnset) {
  ::unsetenv("DDPLAUNCH_STATUS_SOCKET");
  shim::report(c::StatusEvent::InitBegin, "x");
  EXPECT_FALSE(receive(100));
  ::setenv("DDPLAUNCH_STATUS_SOCKET", socket_.path().c_str(), 1);
  ::unsetenv("RANK");
  shim::report(c::StatusEvent::InitBegin, "x");
  EXPECT_FALSE(receive(100));
}

TEST_F(StatusSocket, GoneOrFullSocketNeverBlocks) {
  // Fill the receive queue: report() must return at once (MSG_DONTWAIT), not block.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) shim::report(c::StatusEvent::Heartbeat, std::string(1000, 'h'));
  // Socket file removed: silently nothing.
  std::filesystem::remove(socket_.path());
  shim::report(c::StatusEvent::InitBegin);
  ::setenv("DDPLAUNCH_STATUS_SOCKET", (socket_.dir() + "/no/such/dir/s").c_str(), 1);
  shim::report(c::StatusEvent::InitBegin);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  auto first = receive(100);
  ASSERT_TRUE(first) << "the queued datagrams should still be readable";
  EXPECT_TRUE(c::parse_status(*first));
}

TEST_F(StatusSocket, SecondStartDoesNotAddAThread) {
  shim::start_heartbeat(std::chrono::milliseconds(50));
  shim::start_heartbeat(std::chrono::milliseconds(50));
  // One thread sends ~11 beats in 500 ms, two would send ~22. Load only lowers the count.
  int beats = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < end) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (receive(static_cast<int>(std::max<long>(left.count(), 0)))) ++beats;
  }
  shim::stop_heartbeat();
  EXPECT_GE(beats, 1);
  EXPECT_LE(beats, 15);
}

TEST_F(StatusSocket, HeartbeatRepeatsUntilStoppedAndIsIdempotent) {
  shim::start_heartbeat(std::chrono::milliseconds(20));
  shim::start_heartbeat(std::chrono::milliseconds(20));  // no second thread
  int beats = 0;
  for (int i = 0; i < 5; ++i) {
    auto line = receive(2000);
    ASSERT_TRUE(line) << "heartbeat " << i << " did not arrive";
    auto m = c::parse_status(*line);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->event, c::StatusEvent::Heartbeat);
    ++beats;
  }
  EXPECT_EQ(beats, 5);
  shim::stop_heartbeat();
  shim::stop_heartbeat();
  while (receive(0)) {  // drain what was sent before the stop
  }
  EXPECT_FALSE(receive(150)) << "heartbeat still running after stop_heartbeat()";
  // Restartable after a stop.
  shim::start_heartbeat(std::chrono::milliseconds(20));
  EXPECT_TRUE(receive(2000));
  shim::stop_heartbeat();
}

}  // namespace

namespace {

// The step counter: first step reported at once, then at most once per interval, with the
// longest interval since the previous report; counting never stops.
TEST(StepCounter, ReportsTheFirstStepThenAtMostOncePerIntervalWithTheLongestGap) {
  using namespace std::chrono_literals;
  shim::StepCounter counter(1000ms);
  const auto t0 = shim::StepCounter::Clock::time_point{} + 100s;
  auto first = counter.on_step(t0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->steps, 1);
  EXPECT_EQ(first->max_interval_ms, 0);
  EXPECT_FALSE(counter.on_step(t0 + 200ms));
  EXPECT_FALSE(counter.on_step(t0 + 900ms));  // a 700 ms gap: the longest so far
  auto second = counter.on_step(t0 + 1000ms);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->steps, 4);
  EXPECT_EQ(second->max_interval_ms, 700);
  auto after_pause = counter.on_step(t0 + 31000ms);  // a 30 s step: reported at once
  ASSERT_TRUE(after_pause);
  EXPECT_EQ(after_pause->steps, 5);
  EXPECT_EQ(after_pause->max_interval_ms, 30000);
}

TEST(StepCounter, EachReportAfterTheFirstCarriesItsWallTimeAndTheWaitInsideCollectives) {
  using namespace std::chrono_literals;
  shim::StepCounter counter(1000ms);
  const auto t0 = shim::StepCounter::Clock::time_point{} + 100s;
  counter.add_wait(5s);  // before the first step: not part of any report's span
  auto first = counter.on_step(t0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->span_ms, 0);
  EXPECT_EQ(first->wait_ms, 0);
  counter.add_wait(300ms);
  EXPECT_FALSE(counter.on_step(t0 + 500ms));
  counter.add_wait(200ms);
  auto second = counter.on_step(t0 + 1200ms);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->span_ms, 1200);
  EXPECT_EQ(second->wait_ms, 500);
  counter.add_wait(9s);  // more than the span (a collective begun long before): capped
  auto third = counter.on_step(t0 + 2400ms);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->wait_ms, third->span_ms);
  counter.add_wait(-3s);  // nonsense: nothing
  auto fourth = counter.on_step(t0 + 3600ms);
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->wait_ms, 0);
  // A thousand collectives of 0.6 ms each: 600 ms of waiting, not 0 (each rounded down alone).
  for (int i = 0; i < 1000; ++i) counter.add_wait(600us);
  auto fifth = counter.on_step(t0 + 4800ms);
  ASSERT_TRUE(fifth);
  EXPECT_EQ(fifth->wait_ms, 600);
}

TEST(StepDetail, FormatsAndParsesAndRejectsGarbage) {
  EXPECT_EQ(c::format_step_detail({12, 340}), "12 340");
  auto p = c::parse_step_detail("12 340");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->steps, 12);
  EXPECT_EQ(p->max_interval_ms, 340);
  EXPECT_FALSE(c::parse_step_detail(""));
  EXPECT_FALSE(c::parse_step_detail("12"));
  EXPECT_FALSE(c::parse_step_detail("-1 5"));
  EXPECT_FALSE(c::parse_step_detail("x 5"));
}

TEST(StepDetail, TheMeasuredSpanAndWaitAreOptionalAndANonsensePairIsLeftOut) {
  EXPECT_EQ(c::format_step_detail({12, 340, 1000, 250}), "12 340 1000 250");
  auto measured = c::parse_step_detail("12 340 1000 250");
  ASSERT_TRUE(measured);
  EXPECT_EQ(measured->span_ms, 1000);
  EXPECT_EQ(measured->wait_ms, 250);
  auto older_shim = c::parse_step_detail("12 340");
  ASSERT_TRUE(older_shim);
  EXPECT_EQ(older_shim->span_ms, -1);
  EXPECT_EQ(older_shim->wait_ms, -1);
  for (const char* nonsense : {"12 340 1000 2000", "12 340 -5 0", "12 340 1000", "12 340 x 3"}) {
    auto p = c::parse_step_detail(nonsense);
    ASSERT_TRUE(p) << nonsense;  // the count is still good
    EXPECT_EQ(p->steps, 12);
    EXPECT_EQ(p->span_ms, -1) << nonsense;
    EXPECT_EQ(p->wait_ms, -1) << nonsense;
  }
}

// 10000 steps in a tight loop: one datagram (the first), not 10000; a section reports its
// begin and end with its name.
TEST_F(StatusSocket, StepsAreCountedCheaplyAndReportedRarelyAndSectionsBracketAPause) {
  for (int i = 0; i < 10000; ++i) shim::step();
  auto line = receive(2000);
  ASSERT_TRUE(line);
  auto m = c::parse_status(*line);
  ASSERT_TRUE(m) << *line;
  EXPECT_EQ(m->event, c::StatusEvent::Step);
  auto progress = c::parse_step_detail(m->detail);
  ASSERT_TRUE(progress) << m->detail;
  EXPECT_GE(progress->steps, 1);
  int more = 0;
  while (receive(50)) ++more;
  EXPECT_LE(more, 3) << "steps must be reported about once a second, not per step";
  {
    shim::Section checkpoint("checkpoint");
    auto begin = receive(2000);
    ASSERT_TRUE(begin);
    auto b = c::parse_status(*begin);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->event, c::StatusEvent::SectionBegin);
    EXPECT_EQ(b->detail, "checkpoint");
  }
  auto end = receive(2000);
  ASSERT_TRUE(end);
  auto e = c::parse_status(*end);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, c::StatusEvent::SectionEnd);
  EXPECT_EQ(e->detail, "checkpoint");
}

}  // namespace
