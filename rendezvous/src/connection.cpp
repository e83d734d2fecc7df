// One framed TCP connection: read loop, write queue with a cap, bounded graceful close.
#include "connection.h"

#include <fcntl.h>

namespace ddplaunch::rendezvous::detail {

Connection::Connection(tcp::socket socket, std::size_t max_frame_bytes)
    : socket_(std::move(socket)),
      reader_(max_frame_bytes),
      write_limit_(4 * max_frame_bytes + (1u << 16)),
      close_timer_(socket_.get_executor()) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  if (!ec) {
    auto address = ep.address();
    // On a dual-stack listener ("::") IPv4 peers arrive as ::ffff:a.b.c.d; say a.b.c.d, as
    // an IPv4 listener would (node checks compare these with the nodes' own addresses).
    if (address.is_v6() && address.to_v6().is_v4_mapped())
      address = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
    peer_ip_ = address.to_string();
    peer_ = (address.is_v6() ? "[" + peer_ip_ + "]" : peer_ip_) + ":" + std::to_string(ep.port());
  } else {
    peer_ = peer_ip_ = "(unknown peer)";
  }
  socket_.set_option(tcp::no_delay(true), ec);
  ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);  // Asio does not: workers must not inherit it
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

void Connection::read_more() {
  if (reading_) return;
  reading_ = true;
  socket_.async_read_some(boost::asio::buffer(buf_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t n) { self->on_read(ec, n); });
}

void Connection::on_read(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
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
  reader_.append(buf_.data(), n);
  std::string_view body;
  std::string error;
  for (;;) {
    auto status = reader_.next_body(body, error);
    if (status == FrameReader::Status::kNeedMore) break;
    std::optional<Frame> frame;
    if (status == FrameReader::Status::kFrame) frame = open_frame(body, error);
    if (!frame) {
      fail(error);
      return;
    }
    auto handler = on_frame_;  // the handler may close us (and drop on_frame_) while it runs
    handler(*frame);
    if (!open_) {
      if (closing_) read_more();
      return;
    }
  }
  read_more();
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
  std::string body = encode_body(frame, raw_tail);
  if (seal_) seal_->seal(body);
  std::string bytes = length_prefixed(body);
  if (queue_.size() + in_flight_.size() + bytes.size() > write_limit_) {
    // Failed from the event loop, not inside send(): whoever sends (the launcher carrying out
    // its decisions) hears of the lost peer once its own call returned. Nothing more is sent.
    failing_ = true;
    boost::asio::post(socket_.get_executor(),
                      [self = shared_from_this(), why = "peer is not reading its messages (" +
                                                        std::to_string(queue_.size() + in_flight_.size()) +
                                                        " bytes queued)"] { self->fail(why); });
    return;
  }
  queue_ += bytes;
  if (!writing_) write_more();
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
