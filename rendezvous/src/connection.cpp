// One framed TCP connection: read loop, write queue with a cap, bounded graceful close.
#include "connection.h"

#include <fcntl.h>

#include <array>
#include <optional>

namespace ddplaunch::rendezvous::detail {

namespace {

// The peer's endpoint, or none when the socket is already gone (reset while it waited).
std::optional<boost::asio::ip::tcp::endpoint> remote_of(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return std::nullopt;
  return ep;
}

// Where every connection of this thread reads into: a connection holds no buffer while it
// waits, and whatever a read brings is moved into its FrameReader at once.
char* shared_read_buffer(std::size_t& size) {
  static thread_local std::array<char, 64 * 1024> buffer;
  size = buffer.size();
  return buffer.data();
}

}  // namespace

Connection::Connection(tcp::socket socket, std::size_t max_frame_bytes)
    : Connection(std::move(socket), tcp::endpoint(), max_frame_bytes) {
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);  // frames are small and each is awaited
  ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);  // Asio does not: workers must not inherit it
}

Connection::Connection(tcp::socket socket, const tcp::endpoint& remote, std::size_t max_frame_bytes)
    : socket_(std::move(socket)),
      reader_(max_frame_bytes),
      write_limit_(4 * max_frame_bytes + (1u << 16)),
      close_timer_(socket_.get_executor()) {
  const std::optional<tcp::endpoint> ep = remote.port() != 0 ? std::optional<tcp::endpoint>(remote) : remote_of(socket_);
  if (ep) {
    auto address = ep->address();
    // On a dual-stack listener ("::") IPv4 peers arrive as ::ffff:a.b.c.d; say a.b.c.d, as
    // an IPv4 listener would (node checks compare these with the nodes' own addresses).
    if (address.is_v6() && address.to_v6().is_v4_mapped())
      address = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
    peer_ip_ = address.to_string();
    peer_ = (address.is_v6() ? "[" + peer_ip_ + "]" : peer_ip_) + ":" + std::to_string(ep->port());
  } else {
    peer_ = peer_ip_ = "(unknown peer)";
  }
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);  // reads and writes are tried at once, never block the loop
}

std::string Connection::local_ip() const {
  boost::system::error_code ec;
  auto ep = socket_.local_endpoint(ec);
  return ec ? std::string() : ep.address().to_string();
}

void Connection::start(FrameHandler on_frame, ErrorHandler on_error) {
  on_frame_ = std::move(on_frame);
  on_error_ = std::move(on_error);
  read_more();
}

// Waits until the socket is readable, then reads what it holds into the shared buffer.
void Connection::read_more() {
  if (reading_) return;
  reading_ = true;
  socket_.async_wait(tcp::socket::wait_read,
                     [self = shared_from_this()](const boost::system::error_code& ec) { self->on_readable(ec); });
}

void Connection::on_readable(const boost::system::error_code& wait_error) {
  reading_ = false;
  std::size_t size = 0;
  char* buffer = shared_read_buffer(size);
  boost::system::error_code ec = wait_error;
  std::size_t n = 0;
  if (!ec) n = socket_.read_some(boost::asio::buffer(buffer, size), ec);
  if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
    if (open_ || closing_) read_more();  // woken without data: wait again
    return;
  }
  if (!open_) {
    // Draining after a graceful close: wait for the peer's EOF so our last frame is not reset.
    if (closing_) {
      if (ec) finish_close();
      else read_more();
    }
    return;
  }
  if (ec) {
    fail(ec == boost::asio::error::eof ? "connection closed by the peer" : ec.message());
    return;
  }
  reader_.append(buffer, n);
  if (!take_frames()) return;
  read_more();
}

bool Connection::take_frames() {
  std::string_view body;
  std::string error;
  for (;;) {
    auto status = reader_.next_body(body, error);
    if (status == FrameReader::Status::kNeedMore) return true;
    std::optional<Frame> frame;
    if (status == FrameReader::Status::kFrame) frame = open_frame(body, error);
    if (!frame) {
      fail(error);
      return false;
    }
    auto handler = on_frame_;  // the handler may close us (and drop on_frame_) while it runs
    handler(*frame);
    if (!open_) {
      if (closing_) read_more();
      return false;
    }
  }
}

// Checked one frame at a time: the handler of the frame before may just have sealed us.
std::optional<Frame> Connection::open_frame(std::string_view body, std::string& error) {
  if (seal_) {
    auto inner = seal_->open(body, error);
    if (!inner) {
      error = "refused a frame from " + peer_ + ": " + error + "; connection closed";
      return std::nullopt;
    }
    body = *inner;
  }
  auto frame = decode_body(body, error);
  if (!frame) error = "malformed message: " + error;
  return frame;
}

void Connection::send(const Frame& frame, std::string_view raw_tail) {
  if (!open_ || failing_) return;
  // Encoded (and sealed) straight into the queue, behind room for its length.
  const std::size_t start = queue_.size();
  queue_.append(4, '\0');
  append_body(queue_, frame, raw_tail);
  if (seal_) seal_->seal_tail(queue_, start + 4);
  const std::size_t bytes = queue_.size() - start;
  if (queue_.size() + in_flight_.size() > write_limit_) {
    queue_.resize(start);  // not queued
    // Failed from the event loop, not inside send(): whoever sends (the launcher carrying out
    // its decisions) hears of the lost peer once its own call returned. Nothing more is sent.
    failing_ = true;
    boost::asio::post(socket_.get_executor(),
                      [self = shared_from_this(), why = "peer is not reading its messages (" +
                                                        std::to_string(queue_.size() + in_flight_.size()) +
                                                        " bytes queued)"] { self->fail(why); });
    return;
  }
  const auto n = static_cast<std::uint32_t>(bytes - 4);
  queue_[start] = static_cast<char>(n >> 24);
  queue_[start + 1] = static_cast<char>(n >> 16);
  queue_[start + 2] = static_cast<char>(n >> 8);
  queue_[start + 3] = static_cast<char>(n);
  last_sent_ = std::chrono::steady_clock::now();
  if (writing_ || flush_posted_) return;
  flush_posted_ = true;
  boost::asio::post(socket_.get_executor(), [self = shared_from_this()] { self->flush(); });
}

// The frames queued this turn, in one system call when the socket takes them all (it nearly
// always does: they are small); what it does not take goes out asynchronously.
void Connection::flush() {
  flush_posted_ = false;
  if ((!open_ && !closing_) || writing_ || queue_.empty()) return;
  boost::system::error_code ec;
  const std::size_t n = socket_.write_some(boost::asio::buffer(queue_), ec);
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    queue_.clear();
    if (open_) fail("write failed: " + ec.message());
    else finish_close();
    return;
  }
  if (n == queue_.size()) {
    queue_.clear();
    if (closing_) begin_shutdown();
    return;
  }
  queue_.erase(0, n);
  write_more();
}

void Connection::write_more() {
  in_flight_ = std::move(queue_);
  queue_.clear();
  writing_ = true;
  boost::asio::async_write(socket_, boost::asio::buffer(in_flight_),
                           [self = shared_from_this()](const boost::system::error_code& ec,
                                                       std::size_t) {
                             self->writing_ = false;
                             self->in_flight_.clear();
                             if (ec) {
                               if (self->open_) self->fail("write failed: " + ec.message());
                               else if (self->closing_) self->finish_close();
                               return;
                             }
                             if (!self->open_ && !self->closing_) return;
                             if (!self->queue_.empty()) self->write_more();
                             else if (self->closing_) self->begin_shutdown();
                           });
}

void Connection::close_graceful(std::chrono::milliseconds bound) {
  if (!open_) return;
  open_ = false;
  closing_ = true;
  on_frame_ = nullptr;
  on_error_ = nullptr;
  close_timer_.expires_after(bound);
  close_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->finish_close();
  });
  if (!writing_ && queue_.empty()) begin_shutdown();
}

void Connection::begin_shutdown() {
  if (shut_) return;
  shut_ = true;
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) {
    finish_close();
    return;
  }
  read_more();
}

void Connection::finish_close() {
  closing_ = false;
  close_timer_.cancel();
  boost::system::error_code ec;
  socket_.close(ec);
}

void Connection::close_now() {
  open_ = false;
  on_frame_ = nullptr;
  on_error_ = nullptr;
  finish_close();
}

void Connection::fail(const std::string& why) {
  if (!open_) return;
  auto handler = std::move(on_error_);
  close_now();
  if (handler) handler(why);
}

}  // namespace ddplaunch::rendezvous::detail
