// Internal to the etcd module: the connection to one etcd endpoint, plain TCP or TLS over
// TCP, as one stream type that Beast's HTTP reads and writes take (the one-shot calls in
// gateway_transport.cpp and the watch in watch.cpp), with the failures of either worded for
// the person at the terminal. A plain stream never touches OpenSSL.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp uses std::exchange unincluded

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "etcd/http_stream.h"
#include "etcd/tls_context.h"

namespace ddplaunch::etcd {

// The OpenSSL context make_tls_context built, and the files it came from (for messages).
class TlsContext {
 public:
  explicit TlsContext(TlsFiles files_in);
  boost::asio::ssl::context ssl;
  TlsFiles files;
};

}  // namespace ddplaunch::etcd

namespace ddplaunch::etcd::detail {

class GatewayStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  // `tls` null: plain HTTP. The context must outlive the stream.
  GatewayStream(const executor_type& executor, const TlsContext* tls);

  // Connects to `ep` within `bound`; with TLS also the handshake (SNI for a name, the
  // server's certificate checked against cacert and against ep.host: its DNS names, or its
  // IP addresses for a literal). Returns "" or the worded reason. The expiry is left set.
  boost::asio::awaitable<std::string> connect(const Endpoint& ep, std::chrono::milliseconds bound);

  // Why a read or write failed, worded (a TLS alert too: e.g. etcd wants a client certificate).
  std::string describe(const boost::system::error_code& ec, const Endpoint& ep, Step step,
                       std::chrono::milliseconds bound) const;

  boost::beast::tcp_stream& tcp() { return tls_ ? tls_->next_layer() : *plain_; }
  executor_type get_executor() { return tcp().get_executor(); }
  bool is_tls() const { return tls_.has_value(); }

  // Beast's AsyncReadStream / AsyncWriteStream: forwarded to the TLS or the plain stream.
  template <typename Buffers, typename Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    if (tls_) return tls_->async_read_some(buffers, std::forward<Token>(token));
    return plain_->async_read_some(buffers, std::forward<Token>(token));
  }
  template <typename Buffers, typename Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    if (tls_) return tls_->async_write_some(buffers, std::forward<Token>(token));
    return plain_->async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  const TlsContext* context_;
  std::optional<boost::beast::tcp_stream> plain_;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
};

}  // namespace ddplaunch::etcd::detail
