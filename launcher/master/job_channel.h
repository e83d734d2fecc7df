// The seam between the JobCoordinator and the rendezvous server: what the coordinator tells
// the nodes, and the little it asks of the rendezvous. The server carries it in a launcher
// (ServerJobChannel); a test records it instead, so the coordinator runs without sockets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/generation.h"
#include "ddplaunch/rendezvous/server.h"

namespace ddplaunch {

class JobChannel {
 public:
  virtual ~JobChannel() = default;
  virtual void broadcast(const rendezvous::Message& message) = 0;  // to every joined node
  virtual void send_to_member(int member_id, const rendezvous::Message& message) = 0;
  virtual void dismiss_member(int member_id, const std::string& reason) = 0;
  // Every node rejoins for `generation` (fixed node ranks), or only these members, by slot.
  virtual void begin_generation(Generation generation) = 0;
  virtual void begin_generation(Generation generation, const std::vector<int>& members,
                                const std::vector<int>& ran_workers) = 0;
  virtual void abort(const std::string& reason) = 0;  // every node is told why; the rendezvous closes
  virtual std::vector<rendezvous::NodeRecord> joined_nodes() const = 0;
  virtual int rendezvous_port() const = 0;
};

class ServerJobChannel final : public JobChannel {
 public:
  explicit ServerJobChannel(rendezvous::Server& server) : server_(server) {}
  void broadcast(const rendezvous::Message& message) override { server_.broadcast(message); }
  void send_to_member(int member_id, const rendezvous::Message& message) override {
    server_.send_to_member(member_id, message);
  }
  void dismiss_member(int member_id, const std::string& reason) override { server_.dismiss_member(member_id, reason); }
  void begin_generation(Generation generation) override { server_.begin_generation(generation); }
  void begin_generation(Generation generation, const std::vector<int>& members,
                        const std::vector<int>& ran_workers) override {
    server_.begin_generation(generation, members, ran_workers);
  }
  void abort(const std::string& reason) override { server_.abort(reason); }
  std::vector<rendezvous::NodeRecord> joined_nodes() const override { return server_.joined_nodes(); }
  int rendezvous_port() const override { return server_.port(); }

 private:
  rendezvous::Server& server_;
};

}  // namespace ddplaunch
