// Binding the rendezvous server's listening sockets, and why one cannot be bound.
#include "server_listeners.h"

#include <fcntl.h>

namespace ddplaunch::rendezvous {
namespace {

std::string listen_error_hint(const boost::system::error_code& ec) {
  if (ec == boost::asio::error::address_in_use)
    return " (EADDRINUSE: another process — maybe an earlier ddplaunch — holds this port; "
           "stop it or choose another rendezvous port)";
  if (ec == boost::asio::error::access_denied)
    return " (EACCES: ports below 1024 need privileges; choose a port above 1024)";
  if (ec == boost::system::errc::address_not_available)
    return " (EADDRNOTAVAIL: this machine has no such address; bind to one of its own addresses "
           "or leave the bind address empty)";
  return "";
}

// "0.0.0.0" and "::" mean every address; "::" also takes IPv4 (dual-stack) where the OS allows.
bool is_wildcard(const boost::asio::ip::address& a) { return a.is_unspecified(); }

}  // namespace

ListenError ServerListeners::bind_all(const std::vector<std::string>& addresses, std::uint16_t port) {
  for (const auto& text : addresses) {
    if (ListenError error = bind_one(text, acceptors_.empty() ? port : this->port()); error.failed()) {
      close();
      acceptors_.clear();
      return error;
    }
  }
  return {};
}

ListenError ServerListeners::bind_one(const std::string& bind_address, std::uint16_t port) {
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(bind_address, ec);
  if (ec) return {{}, "cannot listen on '" + bind_address + "': not an IP address"};
  tcp::endpoint ep(address, port);
  std::string where = (address.is_v6() ? "[" + bind_address + "]" : bind_address) + ":" + std::to_string(port);
  auto acceptor = std::make_unique<tcp::acceptor>(io_);
  if (acceptor->open(ep.protocol(), ec) || acceptor->set_option(tcp::acceptor::reuse_address(true), ec))
    return {ec, "cannot listen on " + where + ": " + ec.message() + listen_error_hint(ec)};
  if (address.is_v6() && is_wildcard(address)) {
    boost::system::error_code ignored;  // a v6-only host keeps v6 only: still a working listener
    acceptor->set_option(boost::asio::ip::v6_only(false), ignored);
  }
  if (acceptor->bind(ep, ec) || acceptor->listen(boost::asio::socket_base::max_listen_connections, ec)) {
    boost::system::error_code ignored;
    acceptor->close(ignored);
    return {ec, "cannot listen on " + where + ": " + ec.message() + listen_error_hint(ec)};
  }
  ::fcntl(acceptor->native_handle(), F_SETFD, FD_CLOEXEC);  // Asio does not: a worker must not keep the port
  // Linux passes TCP_NODELAY on to every accepted socket: one system call here instead of one
  // per connection (Connection's constructor for accepted sockets relies on it).
  acceptor->set_option(tcp::no_delay(true), ec);
  acceptors_.push_back(std::move(acceptor));
  return {};
}

std::uint16_t ServerListeners::port() const {
  if (acceptors_.empty()) return 0;
  boost::system::error_code ec;
  auto ep = acceptors_.front()->local_endpoint(ec);
  return ec ? 0 : ep.port();
}

std::vector<std::string> ServerListeners::addresses() const {
  std::vector<std::string> out;
  for (const auto& a : acceptors_) {
    boost::system::error_code ec;
    auto ep = a->local_endpoint(ec);
    if (!ec) out.push_back(ep.address().to_string());
  }
  return out;
}

std::vector<ServerListeners::tcp::acceptor*> ServerListeners::all() const {
  std::vector<tcp::acceptor*> out;
  for (const auto& a : acceptors_) out.push_back(a.get());
  return out;
}

void ServerListeners::close() {
  boost::system::error_code ignored;
  for (auto& a : acceptors_) a->close(ignored);
}

}  // namespace ddplaunch::rendezvous
