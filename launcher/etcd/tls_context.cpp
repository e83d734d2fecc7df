// The OpenSSL context of an etcd client, built from --rdzv-conf's files; see tls_context.h.
#include "etcd/tls_context.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/ssl.h>

#include "etcd/gateway_stream.h"
#include "etcd/openssl_loader.h"

namespace ddplaunch::etcd {
namespace asio = boost::asio;

namespace {

// "" when `path` can be opened for reading, else why not (OpenSSL's own error would say less).
std::string unreadable(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::string("cannot read it: ") + std::strerror(errno);
  ::close(fd);
  return {};
}

std::string named(const char* key, const std::string& path) { return std::string("--rdzv-conf ") + key + "=" + path; }

}  // namespace

TlsContext::TlsContext(TlsFiles files_in) : ssl(asio::ssl::context::tls_client), files(std::move(files_in)) {}

Result<std::shared_ptr<TlsContext>> make_tls_context(const TlsFiles& files) {
  using R = Result<std::shared_ptr<TlsContext>>;
  if (files.cert.empty() != files.key.empty())
    return R::failure(files.cert.empty()
                          ? named("key", files.key) + " is given without cert=: a client certificate needs both"
                          : named("cert", files.cert) + " is given without key=: a client certificate needs both");
  for (const auto& [key, path] : {std::pair{"cacert", files.cacert}, {"cert", files.cert}, {"key", files.key}})
    if (!path.empty())
      if (auto why = unreadable(path); !why.empty()) return R::failure(named(key, path) + ": " + why);
  if (const auto& why = detail::load_openssl(); !why.empty()) return R::failure(why);

  auto context = std::make_shared<TlsContext>(files);
  auto& ssl = context->ssl;
  SSL_CTX_set_min_proto_version(ssl.native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  if (files.cacert.empty()) ssl.set_default_verify_paths(ec);
  else ssl.load_verify_file(files.cacert, ec);
  if (ec)
    return R::failure(files.cacert.empty() ? "the system's CA certificates cannot be loaded (" + ec.message() +
                                                 "): give --rdzv-conf cacert=CA.pem"
                                           : named("cacert", files.cacert) + ": not a PEM CA certificate (" +
                                                 ec.message() + ")");
  ssl.set_verify_mode(asio::ssl::verify_peer);
  if (!files.cert.empty()) {
    ssl.use_certificate_chain_file(files.cert, ec);
    if (ec) return R::failure(named("cert", files.cert) + ": not a PEM certificate (" + ec.message() + ")");
    ssl.use_private_key_file(files.key, asio::ssl::context::pem, ec);
    if (ec)
      return R::failure(named("key", files.key) + ": not a PEM private key of cert=" + files.cert + " (" +
                        ec.message() + ")");
    if (SSL_CTX_check_private_key(ssl.native_handle()) != 1)
      return R::failure(named("key", files.key) + " is not the private key of cert=" + files.cert);
  }
  return R::success(std::move(context));
}

}  // namespace ddplaunch::etcd
