// Worker-port checks: range, distinctness, bind+listen probe and bind-to-0 free-port pick.
#include "ddplaunch/preflight/port.h"
#include "ddplaunch/preflight/port_holder.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "sockaddr_text.h"
#include "unique_fd.h"

namespace ddplaunch::preflight {
namespace {

// Outcome of one bind (+ listen) attempt; port is the bound port (read back).
struct BindAttempt {
  int err = 0;          // errno, 0 on success
  int port = 0;
  std::string failed;   // "socket" / "bind" / "listen" / "address"
};

BindAttempt bind_listen_on(const std::string& addr, int port);

// "" means every address, as c10d's TCPStore binds it: dual-stack "::" (which also conflicts
// with IPv4 holders of the port), or 0.0.0.0 where the kernel has no IPv6.
BindAttempt bind_listen(const std::string& bind_address, int port) {
  if (!bind_address.empty()) return bind_listen_on(bind_address, port);
  BindAttempt a = bind_listen_on("::", port);
  if (a.failed == "socket" && a.err == EAFNOSUPPORT) return bind_listen_on("0.0.0.0", port);
  return a;
}

BindAttempt bind_listen_on(const std::string& addr, int port) {
  BindAttempt a;
  sockaddr_storage ss{};
  auto len = parse_ip_literal(addr, port, ss);
  if (!len) {
    a.failed = "address";
    a.err = EINVAL;
    return a;
  }
  UniqueFd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    a.failed = "socket";
    a.err = errno;
    return a;
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // like c10d TCPStore
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), *len) != 0) {
    a.failed = "bind";
    a.err = errno;
    return a;
  }
  if (::listen(fd.get(), 1) != 0) {
    a.failed = "listen";
    a.err = errno;
    return a;
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &blen) == 0) {
    a.port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  return a;
}

std::string endpoint(const std::string& bind_address, int port) {
  std::string addr = bind_address.empty() ? "*" : bind_address;
  if (addr.find(':') != std::string::npos && addr.front() != '[') addr = "[" + addr + "]";
  return addr + ":" + std::to_string(port);
}

}  // namespace

CheckOutcome check_port_in_range(int port, std::string_view what) {
  if (port >= 1 && port <= 65535) return CheckOutcome::pass();
  return CheckOutcome::fail(std::string(what) + " " + std::to_string(port) +
                            " is out of range: a TCP port must be 1..65535 (e.g. 29500), or use auto");
}

CheckOutcome check_ports_distinct(int rendezvous_port, int worker_port) {
  if (rendezvous_port != worker_port) return CheckOutcome::pass();
  return CheckOutcome::fail(
      "the rendezvous port and the worker port are both " + std::to_string(worker_port) +
      ": ddplaunch's rendezvous server already listens there on node 0, so rank 0's c10d store "
      "could not bind it. Use a different --worker-port (e.g. " +
      std::to_string(worker_port == 29500 ? 29501 : 29500) + ") or --worker-port auto");
}

std::string likely_port_holder(int port) {
  if (std::string holder = describe_port_holder(port); !holder.empty())
    return "it is held by " + holder + " on this node; stop that process if it is a leftover (`ss -ltnp 'sport = :" +
           std::to_string(port) + "'` shows it too)";
  std::string who;
  if (port == 29500) {
    who = "most likely the c10d store of another PyTorch job on this node (29500 is the default "
          "MASTER_PORT of torchrun and torch.distributed), or a leftover worker of an earlier run";
  } else if (port == 29400) {
    who = "most likely a torchrun c10d rendezvous (29400 is its default port) or another "
          "ddplaunch master";
  } else {
    int lo = 32768, hi = 60999;
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    range >> lo >> hi;
    if (port >= lo && port <= hi) {
      who = "it is inside this node's ephemeral range " + std::to_string(lo) + "-" +
            std::to_string(hi) + ", so an outgoing connection may hold it; prefer a port below " +
            std::to_string(lo);
    } else {
      who = "another server or an earlier training job (a leftover worker) on this node";
    }
  }
  return who + "; run `ss -ltnp 'sport = :" + std::to_string(port) + "'` to see the process";
}

CheckOutcome check_port_bindable(const std::string& bind_address, int port) {
  if (auto r = check_port_in_range(port); !r) return r;
  BindAttempt a = bind_listen(bind_address, port);
  if (a.err == 0) return CheckOutcome::pass();
  const std::string where = endpoint(bind_address, port);
  if (a.failed == "address") {
    return CheckOutcome::fail("bind address '" + bind_address +
                              "' is not an IP literal; use an address of this node or 0.0.0.0");
  }
  switch (a.err) {
    case EADDRINUSE:
      return CheckOutcome::fail("worker port " + where + " is already in use: " +
                                likely_port_holder(port) +
                                ". Pass --worker-port auto to let ddplaunch pick a free port, or "
                                "choose another port.");
    case EACCES:
      return CheckOutcome::fail("no permission to bind " + where +
                                ": ports below 1024 need root or CAP_NET_BIND_SERVICE; use a port "
                                "above 1024 (e.g. 29500) or --worker-port auto");
    case EADDRNOTAVAIL:
      return CheckOutcome::fail("cannot bind " + where + ": address " + bind_address +
                                " does not belong to this node; use one of its addresses or 0.0.0.0");
    default:
      return CheckOutcome::fail("cannot " + a.failed + " " + where + ": " + std::strerror(a.err));
  }
}

Result<int> find_free_port(const std::string& bind_address) {
  BindAttempt a = bind_listen(bind_address, 0);
  if (a.err != 0 || a.port == 0) {
    return Result<int>::failure("cannot find a free port on " + endpoint(bind_address, 0) + " (" +
                                a.failed + ": " + std::strerror(a.err) + ")");
  }
  return Result<int>::success(a.port);
}

}  // namespace ddplaunch::preflight
