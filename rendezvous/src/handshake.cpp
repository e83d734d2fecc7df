// The mutual token proof on both sides; see handshake.h.
#include "handshake.h"

#include "ddplaunch/rendezvous/token_proof.h"
#include "wire.h"

namespace ddplaunch::rendezvous::detail {
namespace {

std::string field_or_empty(const Frame& f, const std::string& key) {
  const std::string* value = find_field(f.fields, key);
  return value ? *value : std::string();
}

constexpr const char* kOwnNodeField = "own";

// Byte comparison whose time depends only on the length (public: secrets are 64 hex
// characters), for the own-node secret, which must not load libcrypto for CRYPTO_memcmp.
bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a.empty()) return false;
  volatile unsigned char differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ = differ | static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

std::string protocol_refusal(const Frame& request) {
  const std::string* protocol = find_field(request.fields, "protocol");
  if (protocol && *protocol == std::to_string(kProtocolVersion)) return "";
  return "rendezvous protocol version mismatch: this node speaks version " + (protocol ? *protocol : std::string("(none)")) +
         ", the master speaks version " + std::to_string(kProtocolVersion) + "; run the same ddplaunch version on all nodes";
}

std::string job_id_refusal(const std::string& job_id, const Frame& request) {
  if (request.job_id == job_id) return "";
  return "job id mismatch: this node's job id '" + request.job_id +
         "' differs from the master's; --job-id must be the same on all nodes";
}

}  // namespace

std::string NodeHandshake::sign(Frame& request, const Frame& hello, int protocol_version) {
  master_nonce_ = field_or_empty(hello, "nonce");
  node_nonce_ = random_nonce();
  if (node_nonce_.empty())
    return "cannot draw a random nonce (getrandom failed)";
  request.fields["protocol"] = std::to_string(protocol_version);
  request.fields["nonce"] = node_nonce_;
  claims_ = claims_of(request);
  if (!own_node_secret_.empty()) {
    request.fields[kOwnNodeField] = own_node_secret_;  // to this launcher's own listener only
    return "";
  }
  if (token_.empty()) return "";
  if (std::string error = token_crypto_error(); !error.empty()) return error;
  request.fields["proof"] = node_proof(token_, master_nonce_, node_nonce_, claims_);
  return "";
}

bool NodeHandshake::master_proved(const Frame& welcome) const {
  if (token_.empty() || !own_node_secret_.empty()) return true;  // no token, or our own server
  const std::string expected = master_proof(token_, node_nonce_, master_nonce_, claims_);
  return !expected.empty() && equal_constant_time(field_or_empty(welcome, "proof"), expected);
}

std::optional<FrameSeal> NodeHandshake::session_seal() const {
  if (token_.empty() || !own_node_secret_.empty()) return std::nullopt;
  return node_seal(session_keys(token_, master_nonce_, node_nonce_, claims_));
}

std::string unproven_master_error(const std::string& where) {
  return "the master at " + where +
         " could not prove the rendezvous token: it is not this job's master or its token differs; "
         "check --master and set the same token (--token / DDPLAUNCH_TOKEN) on all nodes";
}

std::string check_node_proof(const std::string& token, const std::string& master_nonce, const Frame& request) {
  std::string proof = field_or_empty(request, "proof");
  if (token.empty()) {
    if (proof.empty()) return "";
    return "this node has a rendezvous token but the master has none; configure the same token on all "
           "nodes, or none";
  }
  if (proof.empty())
    return "the master requires a rendezvous token and this node has none; set the same token "
           "(--token / DDPLAUNCH_TOKEN) on all nodes";
  if (std::string error = token_crypto_error(); !error.empty()) return "the master " + error;
  if (field_or_empty(request, "nonce").size() != kNonceHexChars)
    return "the request carries no valid nonce (it is not from ddplaunch, or from another version)";
  std::string node_nonce = field_or_empty(request, "nonce");
  if (!equal_constant_time(proof, node_proof(token, master_nonce, node_nonce, claims_of(request))))
    return "authentication failed: this node's rendezvous token differs from the master's (or its request "
           "was altered on the way); set the same token on all nodes";
  return "";
}

std::string check_request(const std::string& token, const std::string& job_id, const std::string& master_nonce,
                          const Frame& request) {
  if (std::string why = protocol_refusal(request); !why.empty()) return why;
  if (std::string why = check_node_proof(token, master_nonce, request); !why.empty()) return why;
  return job_id_refusal(job_id, request);
}

bool claims_own_node(const Frame& request) { return find_field(request.fields, kOwnNodeField) != nullptr; }

std::string check_own_node(const std::string& secret, const std::string& job_id, const Frame& request) {
  if (std::string why = protocol_refusal(request); !why.empty()) return why;
  if (!same_secret(field_or_empty(request, kOwnNodeField), secret))
    return "authentication failed: this join claims to come from the master's own launcher but does not "
           "carry its secret; join with the job's token instead";
  return job_id_refusal(job_id, request);
}

Frame welcome_for(const std::string& token, const std::string& master_nonce, const Frame& request) {
  Frame welcome;
  welcome.kind = kWelcome;
  if (!token.empty())
    welcome.fields["proof"] =
        master_proof(token, field_or_empty(request, "nonce"), master_nonce, claims_of(request));
  return welcome;
}

std::optional<FrameSeal> master_session_seal(const std::string& token, const std::string& master_nonce,
                                             const Frame& request) {
  if (token.empty()) return std::nullopt;
  return master_seal(session_keys(token, master_nonce, field_or_empty(request, "nonce"), claims_of(request)));
}

}  // namespace ddplaunch::rendezvous::detail
