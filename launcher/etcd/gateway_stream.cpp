// The connection to one etcd endpoint, plain or TLS; see gateway_stream.h.
#include "etcd/gateway_stream.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ddplaunch::etcd::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The CA files a certificate was checked against, for messages.
std::string trusted(const TlsFiles& files) {
  return files.cacert.empty() ? "the system's CAs (no --rdzv-conf cacert= given)" : "cacert=" + files.cacert;
}

// Why the server's certificate was refused (OpenSSL's verify result), and what to do.
std::string describe_verify_failure(long verify, const Endpoint& ep, const TlsFiles& files) {
  const std::string at = ep.text();
  switch (verify) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "TLS: the server's certificate is not for '" + ep.host + "' (name mismatch: none of its subject " +
             "alternative names is " + (is_ip_literal(ep.host) ? "that IP address" : "that name") +
             "): give the endpoint as the certificate names it, or a server certificate with SAN " +
             (is_ip_literal(ep.host) ? "IP:" : "DNS:") + ep.host;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "TLS: the server's certificate at " + at + " is not signed by " + trusted(files) +
             " (" + X509_verify_cert_error_string(verify) + "): wrong CA? give the CA that signed etcd's --cert-file";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return std::string("TLS: the server's certificate at ") + at + " " + X509_verify_cert_error_string(verify) +
             ": renew it (or check this host's clock)";
    default:
      return "TLS: the server's certificate at " + at + " was refused: " + X509_verify_cert_error_string(verify) +
             " (checked against " + trusted(files) + ")";
  }
}

// A TLS failure (OpenSSL's reason, or the stream cut during the handshake), worded.
std::string describe_tls_failure(const boost::system::error_code& ec, const Endpoint& ep, const TlsFiles& files,
                                 bool handshaking) {
  const std::string at = ep.text();
  const std::string plain_http = "is " + at + " serving plain http (etcd's --listen-client-urls http://...)? then "
                                 "drop --rdzv-conf protocol=https (and https:// in --rdzv-endpoint)";
  if (ec == asio::ssl::error::stream_truncated || ec == asio::error::eof || ec == asio::error::connection_reset)
    return handshaking ? "TLS: the connection closed during the handshake (" + ec.message() + "): " + plain_http
                       : "TLS: the connection closed before an answer (" + ec.message() + ")";
  if (ec.category() != asio::error::get_ssl_category()) return {};
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
      return "TLS: the answer is not TLS (" + ec.message() + "): " + plain_http;
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
      // etcd's Go TLS answers a missing client certificate with "bad certificate" too.
      if (files.cert.empty())
        return "TLS: etcd at " + at + " wants a client certificate (its --client-cert-auth) and refused the "
               "connection without one (" + ec.message() + "): give --rdzv-conf cert=CLIENT.pem,key=CLIENT.key";
      return "TLS: etcd at " + at + " refused this client's certificate (" + ec.message() + "): is cert=" + files.cert +
             " signed by etcd's --trusted-ca-file?";
    default:
      return "TLS: " + ec.message();
  }
}

}  // namespace

GatewayStream::GatewayStream(const executor_type& executor, const TlsContext* tls) : context_(tls) {
  if (tls) tls_.emplace(executor, const_cast<asio::ssl::context&>(tls->ssl));
  else plain_.emplace(executor);
}

asio::awaitable<std::string> GatewayStream::connect(const Endpoint& ep, std::chrono::milliseconds bound) {
  if (auto why = co_await connect_stream(tcp(), ep, bound); !why.empty() || !tls_) co_return why;
  SSL* ssl = tls_->native_handle();
  if (is_ip_literal(ep.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ep.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, ep.host.c_str());  // SNI: names only (RFC 6066)
    SSL_set1_host(ssl, ep.host.c_str());
  }
  boost::system::error_code ec;
  co_await tls_->async_handshake(asio::ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_return std::string{};
  if (ec == beast::error::timeout) co_return "TLS: no handshake within the connect bound: " +
                                       describe_socket_error(ec, ep, Step::Answer, bound);
  if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK)
    co_return describe_verify_failure(verify, ep, context_->files);
  co_return describe_tls_failure(ec, ep, context_->files, /*handshaking=*/true);
}

std::string GatewayStream::describe(const boost::system::error_code& ec, const Endpoint& ep, Step step,
                                    std::chrono::milliseconds bound) const {
  if (tls_) {
    if (auto why = describe_tls_failure(ec, ep, context_->files, /*handshaking=*/false); !why.empty()) return why;
  }
  return describe_socket_error(ec, ep, step, bound);
}

}  // namespace ddplaunch::etcd::detail
