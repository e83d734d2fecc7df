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
  // The kernel then attaches every sender's credentials: its real pid, whatever it claims.
  const int on = 1;
  if (!ec && ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0)
    return fmt::format("cannot ask for senders' credentials on the status socket: {}", std::strerror(errno));
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
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  for (int i = 0; i < 1024; ++i) {  // bounded: a flood cannot stall the loop
    iovec data{buffer, contract::kMaxStatusBytes};
    msghdr header{};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(socket_.native_handle(), &header, MSG_DONTWAIT);
    if (n < 0) return;
    auto message = contract::parse_status(std::string_view(buffer, static_cast<std::size_t>(n)));
    if (!message) continue;
    // Any process of this user can write to the socket file: the pid a report is judged by
    // (GroupSupervisor: the rank's worker or one of its descendants) is the kernel's, never
    // the one written in the report. No credentials: pid 0, which no worker has.
    message->pid = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
        ucred sender{};
        std::memcpy(&sender, CMSG_DATA(c), sizeof sender);
        message->pid = sender.pid;
      }
    if (handler_) handler_(*message);
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
