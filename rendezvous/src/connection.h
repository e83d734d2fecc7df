// One framed TCP connection on the caller's io_context: reads frames, queues writes, closes
// gracefully (flush, then shut down) within a bound. Internal to rendezvous.
// Cheap per connection, since the master holds one per node (16384 and more): no read buffer
// of its own while it waits (it waits for readability, then reads into one buffer shared by
// the thread), and the frames queued in one turn of the event loop leave in one write.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange unincluded

#include <boost/asio.hpp>

#include "ddplaunch/rendezvous/codec.h"
#include "frame_seal.h"

namespace ddplaunch::rendezvous::detail {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using tcp = boost::asio::ip::tcp;
  using FrameHandler = std::function<void(Frame&)>;
  using ErrorHandler = std::function<void(const std::string&)>;

  Connection(tcp::socket socket, std::size_t max_frame_bytes);
  // A socket from accept: its peer's address as accept gave it (no system call to ask again),
  // TCP_NODELAY already set (inherited from the listener, server_listeners.cpp) and
  // close-on-exec already (accept4's SOCK_CLOEXEC, server.cpp).
  Connection(tcp::socket socket, const tcp::endpoint& remote, std::size_t max_frame_bytes);
  // Starts reading. Handlers are dropped (never called again) once the connection closes.
  void start(FrameHandler on_frame, ErrorHandler on_error);
  // Queues a frame, written with the others queued in the same turn of the event loop (one
  // system call); a peer that lets too much pile up (it does not read) is failed, from the
  // event loop: send() itself never calls a handler.
  void send(const Frame& frame, std::string_view raw_tail = {});
  // Stops delivering frames; flushes what is queued, shuts down, closes. Bounded by `bound`.
  void close_graceful(std::chrono::milliseconds bound);
  void close_now();
  // Largest incoming frame from now on (small before a peer has joined, larger after);
  // the write queue keeps the bound given at construction.
  void limit_incoming_frames(std::size_t max_frame_bytes) { reader_.set_limit(max_frame_bytes); }
  // From now on every frame sent carries a MAC and every frame received must carry the right
  // one: a frame that does not is refused and the connection fails naming the peer. Called
  // once the handshake proved the token (never without one: behaviour is then unchanged).
  void seal_frames(FrameSeal seal) { seal_ = std::move(seal); }
  bool is_open() const { return open_; }
  // When a frame was last queued for this peer: any frame tells the peer this side is alive,
  // so a heartbeat is due only after a silence (keepalive_pace.h, heartbeat_due).
  std::chrono::steady_clock::time_point last_sent() const { return last_sent_; }
  const std::string& peer() const { return peer_; }        // "ip:port"
  const std::string& peer_ip() const { return peer_ip_; }
  std::string local_ip() const;

 private:
  void read_more();
  void on_readable(const boost::system::error_code& ec);
  bool take_frames();  // false: the connection failed or closed meanwhile
  void flush();
  void write_more();
  void begin_shutdown();
  void finish_close();
  void fail(const std::string& why);
  std::optional<Frame> open_frame(std::string_view body, std::string& error);

  tcp::socket socket_;
  FrameReader reader_;
  std::optional<FrameSeal> seal_;
  std::size_t write_limit_;
  std::string queue_, in_flight_;
  bool open_ = true, closing_ = false, shut_ = false, writing_ = false, reading_ = false;
  bool flush_posted_ = false;  // a flush of queue_ runs at the end of this turn of the loop
  bool failing_ = false;  // send() found the peer not reading: failed from the event loop
  std::chrono::steady_clock::time_point last_sent_{};
  boost::asio::steady_timer close_timer_;
  FrameHandler on_frame_;
  ErrorHandler on_error_;
  std::string peer_, peer_ip_;
};

}  // namespace ddplaunch::rendezvous::detail
