// Receive loop of the status channel.
#include "status/status_channel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ddplaunch {

StatusChannel::StatusChannel(boost::asio::io_context& io, Handler handler)
    : socket_(io), handler_(std::move(handler)) {}

StatusChannel::~StatusChannel() { close(); }

std::string StatusChannel::open() {
  std::string base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string templ = base + "/ddplaunch-XXXXXX";
  if (!mkdtemp(templ.data())) return fmt::format("cannot create a directory under {}: {}", base, std::strerror(errno));
  directory_ = templ;
  path_ = directory_ + "/status.sock";
  boost::system::error_code ec;
  socket_.open(boost::asio::local::datagram_protocol(), ec);
  if (!ec) ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);  // Asio does not: keep it out of workers
  if (!ec) socket_.bind(boost::asio::local::datagram_protocol::endpoint(path_), ec);
  if (ec) return fmt::format("cannot bind the status socket {}: {}", path_, ec.message());
  receive_next();
  return {};
}

// Waits for readability and reads in the handler, never in the reactor: an async_receive can
// take a datagram off the socket and leave its handler queued behind a worker's exit, so
// drain() would miss an init_failed sent just before that exit.
void StatusChannel::receive_next() {
  socket_.async_wait(boost::asio::socket_base::wait_read, [this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || !socket_.is_open()) return;
    if (!ec) drain();
    receive_next();
  });
}

void StatusChannel::drain() {
  if (!socket_.is_open()) return;
  char buffer[contract::kMaxStatusBytes + 1];
  for (int i = 0; i < 1024; ++i) {  // bounded: a flood cannot stall the loop
    ssize_t n = ::recv(socket_.native_handle(), buffer, contract::kMaxStatusBytes, MSG_DONTWAIT);
    if (n < 0) return;
    if (auto message = contract::parse_status(std::string_view(buffer, static_cast<std::size_t>(n)))) handler_(*message);
  }
}

void StatusChannel::close() {
  boost::system::error_code ec;
  if (socket_.is_open()) socket_.close(ec);
  if (!directory_.empty()) {
    std::error_code fs_ec;
    std::filesystem::remove_all(directory_, fs_ec);
    directory_.clear();
  }
}

}  // namespace ddplaunch
