// MasterLink: what a node part may do with the node's master — send it a message stamped with
// the node's generation — and ask of it: whether there is one. NodeAgent implements it over
// its rendezvous client; a part's unit test records what it is told (recording_master_link.h).
#pragma once

#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/types.h"

namespace ddplaunch {

class MasterLink {
 public:
  // The node has a rendezvous client: a master to send to (it may still be connecting).
  virtual bool connected() const = 0;
  // The generation of the node's current assignment: what its messages are stamped with.
  virtual Generation generation() const = 0;
  // To the master; dropped while the node has none (not connected).
  virtual void send(const rendezvous::Message& message) = 0;

 protected:
  ~MasterLink() = default;
};

}  // namespace ddplaunch
