// TLS to etcd (`--rdzv-conf protocol=https,cacert=CA.pem[,cert=C.pem,key=C.key]`): the files
// read once per client into one OpenSSL context, each refusal naming its key and file. Only
// a client that asked for TLS builds one, so a launcher that speaks plain HTTP to etcd (and
// every launcher without etcd) never initialises OpenSSL (it would add to every start's cost).
#pragma once

#include <memory>
#include <string>

#include "ddplaunch/base/result.h"

namespace ddplaunch::etcd {

struct TlsFiles {
  std::string cacert;  // the CA that signed etcd's server certificate; "" = the system's CAs
  std::string cert;    // a client certificate (etcd's --client-cert-auth); "" = none
  std::string key;     // its private key; given with cert or not at all
  bool operator==(const TlsFiles&) const = default;
};

// The OpenSSL context of one client (opaque here: only the module's streams use it).
class TlsContext;

// Reads and checks the files: the CA bundle, the client certificate and key (and that they
// belong together). Refused with "--rdzv-conf cacert=PATH: <why>".
Result<std::shared_ptr<TlsContext>> make_tls_context(const TlsFiles& files);

}  // namespace ddplaunch::etcd
