// A JobChannel double for the master's tests: records what it is told to send the nodes
// (no rendezvous server, no sockets); the joined nodes are whatever the test sets.
#pragma once

#include <string>
#include <vector>

#include "master/job_channel.h"

namespace ddplaunch {

class RecordingChannel : public JobChannel {
 public:
  struct Order {
    std::string what;  // "broadcast restart", "begin 1", "abort", ...
    rendezvous::Message message;
  };
  std::vector<Order> orders;
  std::vector<rendezvous::NodeRecord> joined;

  void broadcast(const rendezvous::Message& m) override { orders.push_back({"broadcast " + m.type, m}); }
  void send_to_member(int member_id, const rendezvous::Message& m) override {
    orders.push_back({"member " + std::to_string(member_id) + " " + m.type, m});
  }
  void dismiss_member(int member_id, const std::string&) override {
    orders.push_back({"dismiss " + std::to_string(member_id), {}});
  }
  void begin_generation(Generation g) override { orders.push_back({"begin " + to_string(g), {}}); }
  void begin_generation(Generation g, const std::vector<int>&, const std::vector<int>&) override {
    orders.push_back({"begin " + to_string(g), {}});
  }
  void abort(const std::string& reason) override { orders.push_back({"abort " + reason, {}}); }
  std::vector<rendezvous::NodeRecord> joined_nodes() const override { return joined; }
  int rendezvous_port() const override { return 29500; }

  std::vector<std::string> whats() const {
    std::vector<std::string> out;
    for (const auto& o : orders) out.push_back(o.what);
    return out;
  }
  const Order* find(const std::string& what) const {
    for (const auto& o : orders)
      if (o.what == what) return &o;
    return nullptr;
  }
};

}  // namespace ddplaunch
