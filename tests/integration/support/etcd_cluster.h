// Real etcd servers for the etcd client's tests: one or more members on 127.0.0.1 (free
// ports, a data dir under /tmp), each killed by its PID (SIGKILL) and its data removed when
// the cluster goes out of scope, also when a test fails.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "process_runner.h"

namespace ddplaunch::testing {

inline constexpr const char* kEtcdBinary = "/usr/bin/etcd";

class EtcdCluster {
 public:
  EtcdCluster() = default;
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  static bool available();  // the etcd binary is installed
  // Starts `members` members and waits until each serves clients; "" or why not.
  std::string start(int members, std::chrono::milliseconds bound = std::chrono::seconds(40));
  std::string endpoint(int member) const;  // "127.0.0.1:PORT"
  std::string endpoints() const;           // every member's, comma-separated
  void kill(int member);                   // SIGKILL, then reap
  std::string log(int member) const;

 private:
  std::string dir_;
  std::vector<int> client_ports_;
  std::vector<int> peer_ports_;
  std::vector<std::unique_ptr<BackgroundProcess>> members_;
};

}  // namespace ddplaunch::testing
