// `ddplaunch status --watch` against a master that ends while it is asked: a real rendezvous
// server answers the first query, then a listener on the same port drops the next connection
// unanswered (as a master does that closes while a query is under way) and stops listening.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio.hpp>

#include "inspect/job_inspection.h"
#include "config/launch_config.h"
#include "ddplaunch/rendezvous/server.h"
#include "wire/inspection_messages.h"

namespace ddplaunch {
namespace {

using namespace std::chrono_literals;
using tcp = boost::asio::ip::tcp;

TEST(StatusWatch, AQueryDroppedWhileTheMasterEndsIsAskedAgainAndTheEndIsSaid) {
  boost::asio::io_context io;
  std::atomic<bool> answered{false};
  rendezvous::ServerCallbacks callbacks;
  callbacks.query_text = [&answered](const std::string&) {
    answered = true;
    InspectionReply reply;
    reply.kind = ReplyKind::Answer;
    reply.text = "job running\n";
    reply.job.phase = "running";
    return encode_inspection_reply(reply);
  };
  rendezvous::ServerOptions options;
  options.job_id = "watch-job";
  options.expected_nodes = 1;
  auto server = std::make_unique<rendezvous::Server>(io, options, callbacks);
  ASSERT_EQ(server->listen("127.0.0.1", 0), "");
  const std::uint16_t port = server->port();

  // The master's side, in its own thread: answer once, then close; drop one connection on the
  // same port; then nothing listens there any more.
  std::atomic<int> dropped{0};
  std::thread master([&] {
    for (int i = 0; i < 2000 && !answered; ++i) io.run_for(5ms);
    io.run_for(50ms);  // the answer leaves
    server->close();
    io.run_for(50ms);
    server.reset();
    boost::asio::io_context plain;
    tcp::acceptor dropping(plain);
    boost::system::error_code ec;
    dropping.open(tcp::v4(), ec);
    dropping.set_option(tcp::acceptor::reuse_address(true), ec);
    dropping.bind({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return;
    dropping.listen(8, ec);
    tcp::socket peer(plain);
    dropping.async_accept(peer, [&](const boost::system::error_code& e) {
      if (!e) {
        ++dropped;
        peer.close();
      }
      plain.stop();
    });
    plain.run_for(10s);
    dropping.close();
  });

  LaunchConfig config;
  config.master = "127.0.0.1:" + std::to_string(port);
  config.job_id = "watch-job";
  ::testing::internal::CaptureStdout();
  auto watched = std::async(std::launch::async, [&] { return print_status(config, true, false); });
  const bool ended = watched.wait_for(30s) == std::future_status::ready;
  const int exit_code = ended ? watched.get() : -1;
  const std::string out = ::testing::internal::GetCapturedStdout();
  master.join();
  ASSERT_TRUE(ended) << out;
  EXPECT_EQ(dropped, 1) << "the listener on the master's port took no connection";
  EXPECT_EQ(exit_code, 0) << out;
  EXPECT_NE(out.find("job running"), std::string::npos) << out;
  EXPECT_NE(out.find("the job has ended (its master no longer answers)."), std::string::npos) << out;
}

}  // namespace
}  // namespace ddplaunch
