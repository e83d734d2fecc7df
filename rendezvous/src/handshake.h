// Both halves of the mutual token proof, on decoded frames. The master greets with a nonce
// only; the node answers with its own nonce, its claims and proof_n; the master checks proof_n
// and only then sends its welcome carrying proof_m, before anything about the job.
// docs/ARCHITECTURE.md "Rendezvous handshake and trust". Internal to rendezvous.
#pragma once

#include <optional>
#include <string>

#include "ddplaunch/rendezvous/codec.h"
#include "frame_seal.h"

namespace ddplaunch::rendezvous::detail {

// The node's half (a joining node, or `ddplaunch status`): keeps its nonce and the exact
// claims between its request and the master's welcome.
class NodeHandshake {
 public:
  // `own_node_secret`: this launcher joins its own server (ServerOptions::own_node_secret).
  NodeHandshake(std::string token, std::string own_node_secret)
      : token_(std::move(token)), own_node_secret_(std::move(own_node_secret)) {}
  // Completes `request` (kind, job id and claims already filled) as the answer to `hello`:
  // protocol, a fresh nonce and, with a token, the proof. "" or why it cannot.
  std::string sign(Frame& request, const Frame& hello, int protocol_version);
  // True when `welcome` proves the token over this challenge and these claims. Without a
  // token on this node there is nothing to prove (the master refused us if it wants one).
  bool master_proved(const Frame& welcome) const;
  // With a token, the seal for every frame after a proven welcome (both ways); none without.
  std::optional<FrameSeal> session_seal() const;

 private:
  std::string token_, own_node_secret_, master_nonce_, node_nonce_, claims_;
};

// What a node says when the master's proof is missing or wrong.
std::string unproven_master_error(const std::string& where);

// The master's half: "" when `request` is the answer to `master_nonce` from someone who
// knows `token` (or neither side has one), else the refusal, which reveals nothing of the job.
std::string check_node_proof(const std::string& token, const std::string& master_nonce, const Frame& request);
// The master's check of a join or status request: "" when its protocol version, token proof
// (check_node_proof) and job id are right, else the refusal. Nothing in a refusal tells the
// peer about this job: not even its job id.
std::string check_request(const std::string& token, const std::string& job_id, const std::string& master_nonce,
                          const Frame& request);
// True when `request` claims to come from the server's own launcher (an own-node secret).
bool claims_own_node(const Frame& request);
// The master's check of its own launcher's join: "" when its protocol version and job id are
// right and it carries `secret` (compared in constant time), else the refusal. A server
// without a secret refuses every such claim.
std::string check_own_node(const std::string& secret, const std::string& job_id, const Frame& request);
// The welcome proving the master; send it only after check_node_proof passed. Blank job id:
// the node knows its own, and the job's facts follow only in later frames.
Frame welcome_for(const std::string& token, const std::string& master_nonce, const Frame& request);
// The master's seal for every frame after that welcome (none without a token).
std::optional<FrameSeal> master_session_seal(const std::string& token, const std::string& master_nonce,
                                             const Frame& request);

}  // namespace ddplaunch::rendezvous::detail
