// The rendezvous server's listening sockets: one per bound address, all on one port. Binding
// them (and saying why one cannot be bound), their port and addresses, closing them. The
// server runs the accepts on them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <utility>  // before Asio (Boost 1.74 + g++ 12)

#include <boost/asio.hpp>

#include "ddplaunch/rendezvous/server.h"

namespace ddplaunch::rendezvous {

class ServerListeners {
 public:
  using tcp = boost::asio::ip::tcp;
  explicit ServerListeners(boost::asio::io_context& io) : io_(io) {}

  // Every address on one port (port 0: the first address picks a free one, the others take
  // the same); when one cannot be bound, none stays open.
  ListenError bind_all(const std::vector<std::string>& addresses, std::uint16_t port);
  std::uint16_t port() const;  // 0 before bind_all
  std::vector<std::string> addresses() const;
  std::vector<tcp::acceptor*> all() const;
  void close();

 private:
  ListenError bind_one(const std::string& address, std::uint16_t port);

  boost::asio::io_context& io_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;
};

}  // namespace ddplaunch::rendezvous
