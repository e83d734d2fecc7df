// Rendezvous frames dispatched by their typed kind: every kind name decodes to its kind and back,
// each side's table sends each kind it takes to its handler in its stage only (a recorder
// stands in for Server::Impl / Client::Impl), and a frame that finds no route is handled as
// before: dropped by the server before a join, ignored after it; a node loses a master whose
// greeting or proof is an unknown kind and ignores one in session.
#include <poll.h>

#include <map>
#include <set>

#include "../../../rendezvous/src/frame_routes.h"
#include "../../../rendezvous/src/wire.h"
#include "rendezvous/fake_rendezvous_master.h"
#include "rendezvous/raw_peer.h"
#include "rendezvous/rendezvous_test_support.h"

using namespace rdzv_test;
namespace detail = ddplaunch::rendezvous::detail;
using detail::FrameKind;
using detail::LinkStage;
using detail::PeerStage;

namespace {

constexpr std::array<FrameKind, detail::kFrameKindCount> kAllKinds{
    FrameKind::Hello,    FrameKind::Welcome,  FrameKind::Join,      FrameKind::Status,       FrameKind::StatusReply,
    FrameKind::Assign,   FrameKind::Refuse,   FrameKind::Abort,     FrameKind::Progress,     FrameKind::Rejoin,
    FrameKind::Heartbeat, FrameKind::HeartbeatAck, FrameKind::Msg};

// Stands in for Server::Impl: each handler notes its name.
struct ServerRecorder {
  using PeerPtr = int;
  std::vector<std::string> calls;
  void handle_join(const int&, Frame&) { calls.push_back("handle_join"); }
  void handle_status(const int&, Frame&) { calls.push_back("handle_status"); }
  void handle_held_query(const int&, Frame&) { calls.push_back("handle_held_query"); }
  void on_heartbeat(const int&, Frame&) { calls.push_back("on_heartbeat"); }
  void on_heartbeat_ack(const int&, Frame&) { calls.push_back("on_heartbeat_ack"); }
  void on_message(const int&, Frame&) { calls.push_back("on_message"); }
  void handle_rejoin(const int&, Frame&) { calls.push_back("handle_rejoin"); }
};

// Stands in for Client::Impl.
struct ClientRecorder {
  std::vector<std::string> calls;
  void on_hello(Frame&) { calls.push_back("on_hello"); }
  void on_welcome(Frame&) { calls.push_back("on_welcome"); }
  void on_refuse(Frame&) { calls.push_back("on_refuse"); }
  void on_assign(Frame&) { calls.push_back("on_assign"); }
  void on_abort(Frame&) { calls.push_back("on_abort"); }
  void on_progress(Frame&) { calls.push_back("on_progress"); }
  void on_heartbeat(Frame&) { calls.push_back("on_heartbeat"); }
  void on_heartbeat_ack(Frame&) { calls.push_back("on_heartbeat_ack"); }
  void on_message(Frame&) { calls.push_back("on_message"); }
};

// The handler a frame of `kind` (by name) reaches in `stage`, or "" when it finds no route.
template <class Target, class Routes, class Stage>
std::string reached(const Routes& routes, std::string_view kind, Stage stage, auto... peer) {
  Target target;
  Frame f;
  f.kind = std::string(kind);
  const auto* route = detail::find_route(routes, detail::frame_kind(kind), stage);
  if (!route) return "";
  (target.*route->handle)(peer..., f);
  EXPECT_EQ(target.calls.size(), 1u);
  return target.calls.empty() ? "?" : target.calls.front();
}

const std::vector<std::string> kUnknownKinds{"", "bogus", "HELLO", "hb ", " msg", "msg\n", std::string("join\0", 5),
                                             "status_reply2"};

}  // namespace

TEST(RendezvousFrameRoutes, EveryKindNameDecodesToItsKindAndUnknownNamesToNone) {
  std::set<std::string_view> names;
  for (FrameKind kind : kAllKinds) {
    const std::string_view name = detail::frame_kind_name(kind);
    EXPECT_TRUE(names.insert(name).second) << "two kinds named " << name;
    EXPECT_EQ(detail::frame_kind(name), kind) << name;
  }
  // The names on the wire are those of wire.h, unchanged.
  EXPECT_EQ(detail::frame_kind_name(FrameKind::Heartbeat), "hb");
  EXPECT_EQ(detail::frame_kind_name(FrameKind::HeartbeatAck), "hb_ack");
  EXPECT_EQ(detail::frame_kind_name(FrameKind::StatusReply), "status_reply");
  for (const std::string& unknown : kUnknownKinds) EXPECT_FALSE(detail::frame_kind(unknown)) << unknown;
}

TEST(RendezvousFrameRoutes, ServerTableSendsEachKindToItsHandlerInItsStageOnly) {
  static constexpr auto kRoutes = detail::server_routes<ServerRecorder>();
  const std::map<std::pair<FrameKind, PeerStage>, std::string> expected{
      {{FrameKind::Join, PeerStage::Handshake}, "handle_join"},
      {{FrameKind::Status, PeerStage::Handshake}, "handle_status"},
      {{FrameKind::Status, PeerStage::Querying}, "handle_held_query"},
      {{FrameKind::Heartbeat, PeerStage::Joined}, "on_heartbeat"},
      {{FrameKind::HeartbeatAck, PeerStage::Joined}, "on_heartbeat_ack"},
      {{FrameKind::Msg, PeerStage::Joined}, "on_message"},
      {{FrameKind::Rejoin, PeerStage::Joined}, "handle_rejoin"},
  };
  for (FrameKind kind : kAllKinds) {
    for (PeerStage stage : {PeerStage::Handshake, PeerStage::Joined, PeerStage::Querying}) {
      auto it = expected.find({kind, stage});
      EXPECT_EQ(reached<ServerRecorder>(kRoutes, detail::frame_kind_name(kind), stage, 7),
                it == expected.end() ? "" : it->second)
          << detail::frame_kind_name(kind) << " in stage " << static_cast<int>(stage);
    }
  }
  for (const std::string& unknown : kUnknownKinds)
    for (PeerStage stage : {PeerStage::Handshake, PeerStage::Joined, PeerStage::Querying})
      EXPECT_EQ(reached<ServerRecorder>(kRoutes, unknown, stage, 7), "") << unknown;
}

TEST(RendezvousFrameRoutes, ClientTableSendsEachKindToItsHandlerInItsStageOnly) {
  static constexpr auto kRoutes = detail::client_routes<ClientRecorder>();
  const std::map<std::pair<FrameKind, LinkStage>, std::string> expected{
      {{FrameKind::Hello, LinkStage::Greeting}, "on_hello"},
      {{FrameKind::Welcome, LinkStage::Proof}, "on_welcome"},
      {{FrameKind::Refuse, LinkStage::Proof}, "on_refuse"},  // believed before the proof
      {{FrameKind::Refuse, LinkStage::Session}, "on_refuse"},
      {{FrameKind::Assign, LinkStage::Session}, "on_assign"},
      {{FrameKind::Abort, LinkStage::Session}, "on_abort"},
      {{FrameKind::Progress, LinkStage::Session}, "on_progress"},
      {{FrameKind::Heartbeat, LinkStage::Session}, "on_heartbeat"},
      {{FrameKind::HeartbeatAck, LinkStage::Session}, "on_heartbeat_ack"},
      {{FrameKind::Msg, LinkStage::Session}, "on_message"},
  };
  for (FrameKind kind : kAllKinds) {
    for (LinkStage stage : {LinkStage::Greeting, LinkStage::Proof, LinkStage::Session}) {
      auto it = expected.find({kind, stage});
      EXPECT_EQ(reached<ClientRecorder>(kRoutes, detail::frame_kind_name(kind), stage),
                it == expected.end() ? "" : it->second)
          << detail::frame_kind_name(kind) << " in stage " << static_cast<int>(stage);
    }
  }
  for (const std::string& unknown : kUnknownKinds)
    for (LinkStage stage : {LinkStage::Greeting, LinkStage::Proof, LinkStage::Session})
      EXPECT_EQ(reached<ClientRecorder>(kRoutes, unknown, stage), "") << unknown;
}

// The server's own case for what finds no route: before a join the peer is dropped, naming
// the kind (escaped); once joined it is ignored and the connection goes on.
TEST(RendezvousFrameRoutes, ServerDropsAnUnknownKindBeforeAJoinAndIgnoresItAfter) {
  boost::asio::io_context io;
  std::vector<std::string> refused;
  ServerCallbacks cb;
  cb.plan = [](Generation, const std::vector<NodeRecord>&) { return test_plan(); };
  cb.on_refused = [&](const std::string& peer, const std::string& why) { refused.push_back(peer + ": " + why); };
  Server server(io, fast_server(2), cb);  // no token: a raw join is enough
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");

  RawPeer stranger(server.port());
  Frame bogus;
  bogus.kind = "bogus\x1b[2J";
  bogus.job_id = "job-a";
  stranger.send_bytes(encode_frame(bogus));
  ASSERT_TRUE(run_until(io, [&] { stranger.poll(); return stranger.closed_by_server; }));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(contains(refused[0], "expected a join or status request first, got 'bogus\\x1b[2J'")) << refused[0];

  RawPeer node(server.port());
  ASSERT_TRUE(run_until(io, [&] { node.poll(); return node.first_frame().has_value(); }));
  Frame join;
  join.kind = "join";
  join.job_id = "job-a";
  detail::put_facts(join.fields, "f.", facts("raw"));
  join.fields["protocol"] = std::to_string(kProtocolVersion);
  join.fields["nonce"] = random_nonce();
  node.send_bytes(encode_frame(join));
  ASSERT_TRUE(run_until(io, [&] { return server.joined_count() == 1; }));
  node.send_bytes(encode_frame(bogus));
  Frame also_unknown_now = join;  // a handshake kind after the join finds no route either
  node.send_bytes(encode_frame(also_unknown_now));
  Frame hb;
  hb.kind = "hb";
  hb.job_id = "job-a";
  hb.fields["seq"] = "41";
  hb.fields["echo"] = "1";  // a heartbeat that asks for its answer
  node.send_bytes(encode_frame(hb));
  auto got_ack = [&] {
    node.poll();
    for (std::size_t i = 0; auto f = node.nth_frame(i); ++i)
      if (f->kind == "hb_ack" && f->fields["seq"] == "41") return true;
    return false;
  };
  ASSERT_TRUE(run_until(io, got_ack)) << "the heartbeat after the unknown kinds was not answered";
  EXPECT_FALSE(node.closed_by_server);
  EXPECT_EQ(server.joined_count(), 1);
  EXPECT_EQ(refused.size(), 1u) << refused.back();
}

// The node's own case: an unknown kind in place of the greeting or of the proof is not this
// job's master (reported, naming the kind or the missing proof, and connected to again), and
// in session is ignored.
TEST(RendezvousFrameRoutes, NodeLosesAMasterWhoseGreetingIsAnUnknownKind) {
  std::uint16_t port = 0;
  int listener = listen_on_loopback(port);
  boost::asio::io_context io;
  auto node = make_client(io, fast_client(port));
  node.client->join(facts("n"));
  pollfd ready{listener, POLLIN, 0};
  int fd = -1;
  ASSERT_TRUE(run_until(io, [&] { return ::poll(&ready, 1, 0) == 1; }));
  fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(fd, 0);
  Frame bogus;
  bogus.kind = "bogus";
  const std::string bytes = encode_frame(bogus);
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  ASSERT_TRUE(run_until(io, [&] { return !node.log->impostors.empty(); }));
  EXPECT_TRUE(contains(node.log->impostors[0], "sent 'bogus' instead of a greeting")) << node.log->impostors[0];
  EXPECT_TRUE(node.log->losses.empty());  // not this job's master: connected to again until the join timeout
  ::close(fd);
  ::close(listener);
}

TEST(RendezvousFrameRoutes, NodeLosesAMasterThatAnswersItsJoinWithAnUnknownKind) {
  FakeRendezvousMaster fake([](const Frame&, const std::string&) {
    Frame bogus;
    bogus.kind = "bogus";
    return std::vector<Frame>{bogus};
  });
  boost::asio::io_context io;
  auto o = fast_client(fake.port());
  o.token = "tok";
  auto node = make_client(io, o);
  node.client->join(facts("n"));
  ASSERT_TRUE(run_until(io, [&] { return !node.log->impostors.empty(); }));
  EXPECT_TRUE(contains(node.log->impostors[0], "could not prove the rendezvous token")) << node.log->impostors[0];
  EXPECT_TRUE(node.log->assignments.empty());
}

TEST(RendezvousFrameRoutes, NodeIgnoresAnUnknownKindInSession) {
  FakeRendezvousMaster fake([](const Frame& request, const std::string&) {
    Frame welcome, bogus, progress;
    welcome.kind = "welcome";  // no token: a welcome needs no proof
    welcome.job_id = request.job_id;
    bogus.kind = "bogus";
    bogus.job_id = request.job_id;
    progress.kind = "progress";
    progress.job_id = request.job_id;
    progress.fields = {{"joined", "1"}, {"expected", "2"}, {"missing", "b"}};
    return std::vector<Frame>{welcome, bogus, progress};
  });
  boost::asio::io_context io;
  auto node = make_client(io, fast_client(fake.port()));
  node.client->join(facts("n"));
  ASSERT_TRUE(run_until(io, [&] { return node.log->progress_calls > 0 || !node.log->losses.empty(); }));
  EXPECT_TRUE(node.log->losses.empty()) << node.log->losses[0];
  EXPECT_EQ(node.log->last_missing, std::vector<std::string>{"b"});
  node.client->close();
}

namespace ddplaunch::rendezvous::detail {
namespace {

// A heartbeat tick that comes late (this process's loop was held up) judges nobody: frames
// the peer sent meanwhile are still unread. A tick on time judges, and so does the tick after
// a skipped one, however late: a dead peer is still found.
TEST(SilenceJudge, ALateTickJudgesNobodyButOnlyEveryOtherTickIsSkipped) {
  using namespace std::chrono_literals;
  SilenceJudge judge;
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(judge.may_judge(t0, 1s));           // the first tick
  EXPECT_TRUE(judge.may_judge(t0 + 1s, 1s));      // on time
  EXPECT_TRUE(judge.may_judge(t0 + 2500ms, 1s));  // half an interval late: still on time
  EXPECT_FALSE(judge.may_judge(t0 + 15s, 1s));    // the loop was held up for seconds
  EXPECT_TRUE(judge.may_judge(t0 + 30s, 1s));     // late again, but the last one was skipped
  EXPECT_TRUE(judge.may_judge(t0 + 31s, 1s));
}

}  // namespace
}  // namespace ddplaunch::rendezvous::detail
