// StatusChannel: the AF_UNIX datagram socket workers' shims report on. Lives in a
// private temporary directory; malformed datagrams are ignored (any local process can
// write to a socket file).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/datagram_protocol.hpp>

#include "ddplaunch/contract.h"

namespace ddplaunch {

class StatusChannel {
 public:
  using Handler = std::function<void(const contract::StatusMessage&)>;

  explicit StatusChannel(boost::asio::io_context& io) : socket_(io) {}
  ~StatusChannel();

  // Who reads the reports (the GroupSupervisor); none: reports are read and dropped.
  void deliver_to(Handler handler) { handler_ = std::move(handler); }

  std::string open();  // "" or an error; creates the directory and binds the socket
  const std::string& path() const { return path_; }
  const std::string& directory() const { return directory_; }  // private, removed by close()
  void close();
  // Handles every datagram already queued, without waiting: called before a worker's exit
  // is classified, so an init_failed sent just before exiting is never read too late.
  void drain();

 private:
  void receive_next();

  boost::asio::local::datagram_protocol::socket socket_;
  Handler handler_;
  std::string directory_;
  std::string path_;
};

}  // namespace ddplaunch
