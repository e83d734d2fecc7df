// Held query connections on 127.0.0.1: one proven connection carries many queries; a query
// that waits for a different answer is answered when the answer changes (or at the server's
// close with the answer as it stands); the number held is bounded; a client that leaves frees
// its place; the token proof is still required before any answer.
#include <atomic>
#include <mutex>
#include <thread>

#include "ddplaunch/rendezvous/query_session.h"
#include "rendezvous/rendezvous_test_support.h"

using namespace rdzv_test;
using ddplaunch::rendezvous::QueryAnswer;
using ddplaunch::rendezvous::QuerySession;
using ddplaunch::rendezvous::QueryWait;

namespace {

// A master whose status text the test sets, its loop on a thread of its own (bounded).
struct HeldMaster {
  boost::asio::io_context io;
  std::unique_ptr<Server> server;
  std::mutex mutex;
  std::string text = "v1";
  std::atomic<bool> stop{false};
  std::thread loop;

  explicit HeldMaster(std::size_t max_held) {
    ServerOptions o = fast_server(1);
    o.token = "tok";
    o.max_held_queries = max_held;
    o.max_query_wait = std::chrono::minutes(10);
    ServerCallbacks cb;
    cb.status_text = [this] {
      std::lock_guard lock(mutex);
      return text;
    };
    cb.query_text = [](const std::string& query) { return "asked: " + query; };
    server = std::make_unique<Server>(io, std::move(o), std::move(cb));
    EXPECT_EQ(server->listen("127.0.0.1", 0), "");
    loop = std::thread([this] {
      for (int i = 0; i < 4000 && !stop; ++i) run_for(io, 5ms);
      set_text("the loop ended");  // a waiting query answered at the close says so
      server->close();
    });
  }
  ~HeldMaster() {
    stop = true;
    loop.join();
  }
  void set_text(std::string t) {
    std::lock_guard lock(mutex);
    text = std::move(t);
  }
  // The text changes, and the master is told on its own loop.
  void change_to(std::string t) {
    set_text(std::move(t));
    boost::asio::post(io, [this] { server->answers_may_have_changed(); });
  }
  std::uint16_t port() const { return server->port(); }
};

}  // namespace

TEST(RendezvousHeldQueries, OneProvenConnectionCarriesManyQueries) {
  HeldMaster m(4);
  QuerySession session("127.0.0.1", m.port(), "job-a", "tok");
  QueryFailure failure;
  for (int i = 0; i < 5; ++i) {
    const QueryAnswer answer = session.ask(i % 2 ? "tail 0 " + std::to_string(i) : "", failure, 5s);
    ASSERT_FALSE(failure.failed()) << failure.text;
    EXPECT_EQ(answer.text, i % 2 ? "asked: tail 0 " + std::to_string(i) : "v1");
    EXPECT_FALSE(answer.digest.empty());
  }
  EXPECT_EQ(session.connections_opened(), 1u);
}

TEST(RendezvousHeldQueries, AWaitingQueryIsAnsweredWhenItsAnswerChanges) {
  HeldMaster m(4);
  QuerySession session("127.0.0.1", m.port(), "job-a", "tok");
  QueryFailure failure;
  const QueryAnswer first = session.ask("", failure, 5s);
  ASSERT_FALSE(failure.failed()) << failure.text;
  std::thread changer([&] {
    std::this_thread::sleep_for(200ms);  // the query is waiting by then (or answered at once below)
    m.change_to("v2");
  });
  const QueryAnswer second = session.ask("", failure, 5s, QueryWait{first.digest, std::chrono::minutes(10)});
  changer.join();
  ASSERT_FALSE(failure.failed()) << failure.text;
  EXPECT_EQ(second.text, "v2");  // not the close's "the loop ended": the change answered it
  EXPECT_NE(second.digest, first.digest);
  EXPECT_EQ(session.connections_opened(), 1u);
}

TEST(RendezvousHeldQueries, AnUnchangedAnswerComesAtTheWaitsEnd) {
  HeldMaster m(4);
  QuerySession session("127.0.0.1", m.port(), "job-a", "tok");
  QueryFailure failure;
  const QueryAnswer first = session.ask("", failure, 5s);
  const QueryAnswer again = session.ask("", failure, 5s, QueryWait{first.digest, 300ms});
  ASSERT_FALSE(failure.failed()) << failure.text;
  EXPECT_EQ(again.text, "v1");
  EXPECT_EQ(again.digest, first.digest);
}

TEST(RendezvousHeldQueries, TheNumberHeldIsBoundedAndALeavingClientFreesItsPlace) {
  HeldMaster m(1);
  QueryFailure failure;
  {
    QuerySession first("127.0.0.1", m.port(), "job-a", "tok");
    first.ask("", failure, 5s);
    ASSERT_FALSE(failure.failed()) << failure.text;
    QuerySession second("127.0.0.1", m.port(), "job-a", "tok");
    second.ask("", failure, 5s);
    EXPECT_EQ(failure.kind, QueryFailure::Kind::Refused) << failure.text;
    EXPECT_TRUE(contains(failure.text, "holds 1 query connections already")) << failure.text;
  }
  // The first one left: its place is free again (its close reaches the master in its loop).
  QuerySession third("127.0.0.1", m.port(), "job-a", "tok");
  QueryAnswer answer;
  for (int attempt = 0; attempt < 50; ++attempt) {
    answer = third.ask("", failure, 5s);
    if (!failure.failed()) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_FALSE(failure.failed()) << failure.text;
  EXPECT_EQ(answer.text, "v1");
}

TEST(RendezvousHeldQueries, AHeldConnectionStillProvesTheToken) {
  HeldMaster m(4);
  QuerySession stranger("127.0.0.1", m.port(), "job-a", "guess");
  QueryFailure failure;
  const QueryAnswer answer = stranger.ask("", failure, 5s);
  EXPECT_EQ(failure.kind, QueryFailure::Kind::Refused) << failure.text;
  EXPECT_EQ(answer.text, "");
}

TEST(RendezvousHeldQueries, AClientBetweenTwoQueriesAtTheCloseGetsTheAnswerAsItStoodThen) {
  HeldMaster m(4);
  QuerySession session("127.0.0.1", m.port(), "job-a", "tok");
  QueryFailure failure;
  const QueryAnswer first = session.ask("", failure, 5s);
  ASSERT_FALSE(failure.failed()) << failure.text;
  std::atomic<bool> closed{false};
  boost::asio::post(m.io, [&] {
    m.set_text("the job has ended");
    m.server->close();
    m.set_text("asked after the close");  // the launcher is not asked again
    closed = true;
  });
  for (int i = 0; i < 1000 && !closed; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(closed);
  const QueryAnswer last = session.ask("", failure, 5s, QueryWait{first.digest, std::chrono::minutes(10)});
  ASSERT_FALSE(failure.failed()) << failure.text;
  EXPECT_EQ(last.text, "the job has ended");
  session.ask("", failure, 5s);  // then the connection is closed: nothing more is answered
  EXPECT_TRUE(failure.failed());
}
