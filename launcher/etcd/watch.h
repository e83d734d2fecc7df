// A watch of every key under a prefix, streamed from etcd's gateway (`POST /v3/watch`, one
// JSON message per line). After a broken stream it reconnects — to the next endpoint — from
// the last revision it delivered + 1, so no event is lost or delivered twice; it gives up,
// with one report, when no endpoint streams for `reconnect_bound`, or when etcd compacted
// the revision it must resume from (the caller then reads the prefix again).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "etcd/client.h"

namespace ddplaunch::etcd {

class PrefixWatch : public std::enable_shared_from_this<PrefixWatch> {
 public:
  using OnEvents = std::function<void(const std::vector<WatchEvent>& events, Revision revision)>;
  using OnEnd = std::function<void(const std::string& why)>;
  struct Options {
    std::chrono::milliseconds reconnect_bound{10000};
    std::chrono::milliseconds retry_pause{500};
  };

  // From `start_revision` (0: from now; a get's revision + 1: nothing missed since the read).
  // Callbacks run on the io_context; on_end at most once, never after stop().
  static std::shared_ptr<PrefixWatch> start(std::shared_ptr<Client> client, std::string prefix,
                                            Revision start_revision, OnEvents on_events, OnEnd on_end,
                                            Options options);
  void stop();
  // The revision the stream resumes from after a break (last delivered + 1; 0: from now).
  Revision next_revision() const { return next_revision_; }
  // How many streams were opened (1 + reconnects), for the tests.
  int streams_opened() const { return streams_opened_; }

 private:
  PrefixWatch(std::shared_ptr<Client> client, std::string prefix, Revision start_revision, OnEvents on_events,
              OnEnd on_end, Options options);
  void end(std::string why);

  friend struct WatchRun;
  std::shared_ptr<Client> client_;
  std::string prefix_;
  Revision next_revision_;
  OnEvents on_events_;
  OnEnd on_end_;
  Options options_;
  boost::asio::steady_timer pause_;
  std::shared_ptr<CancelSignal> cancel_ = std::make_shared<CancelSignal>();
  bool finished_ = false;
  int streams_opened_ = 0;
};

}  // namespace ddplaunch::etcd
