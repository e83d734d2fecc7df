// init_process_group(): contract → c10d::TCPStore → ProcessGroupGloo (or NCCL), with
// PyTorch's default timeout (or the program's) on both, and the outcome reported on the
// status channel. Never the launcher's DDPLAUNCH_TIMEOUT_S (see shim_torch.h). Its gloo group
// counts each completed collective as progress (progress_counting_gloo.h). One of the two
// translation units of the library that include the heavy c10d headers.
#include <chrono>
#include <exception>
#include <sstream>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef DDPLAUNCH_TORCH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "ddplaunch/shim_torch.h"
#include "progress_counting_gloo.h"

namespace ddplaunch::shim {
namespace {

using contract::StatusEvent;

#ifdef DDPLAUNCH_TORCH_NCCL
constexpr const char* kSupportedBackends = "gloo, nccl";
#else
constexpr const char* kSupportedBackends = "gloo";
#endif

// Names the worker and the rendezvous point, so the message stands alone in a log.
std::string where(const WorkerContract& c, const std::string& backend, double timeout_s) {
  std::ostringstream out;
  out << "rank " << c.rank << "/" << c.world_size << " (" << backend << ", store "
      << c.master_addr << ":" << c.master_port << ", timeout " << timeout_s << " s)";
  return out.str();
}

std::string check_contract(const WorkerContract& c) {
  std::ostringstream out;
  if (c.master_addr.empty()) out << " MASTER_ADDR is empty;";
  if (c.master_port <= 0 || c.master_port > 65535)
    out << " MASTER_PORT=" << c.master_port << " is not a port (1-65535);";
  if (c.world_size < 1) out << " WORLD_SIZE=" << c.world_size << " must be at least 1;";
  if (c.rank < 0 || c.rank >= c.world_size)
    out << " RANK=" << c.rank << " must be in [0, WORLD_SIZE=" << c.world_size << ");";
  return out.str();
}

// Splits "eth0,eth1" into names; empty entries are dropped.
std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::string name;
  std::istringstream in(list);
  while (std::getline(in, name, ','))
    if (!name.empty()) names.push_back(name);
  return names;
}

c10::intrusive_ptr<c10d::ProcessGroup> make_gloo(const c10::intrusive_ptr<c10d::Store>& store,
                                                 const WorkerContract& c,
                                                 std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // Same rule as torch.distributed: GLOO_SOCKET_IFNAME picks the interfaces, else the
  // address this host's name resolves to (falling back to loopback).
  const char* ifnames = std::getenv(contract::kGlooSocketIfname);
  for (const auto& name : split_names(ifnames ? ifnames : ""))
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
  if (options->devices.empty())
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<ProgressCountingGloo>(store, c.rank, c.world_size, options);
}

#ifdef DDPLAUNCH_TORCH_NCCL
// The caller selects the CUDA device (usually LOCAL_RANK) before the first collective.
c10::intrusive_ptr<c10d::ProcessGroup> make_nccl(const c10::intrusive_ptr<c10d::Store>& store,
                                                 const WorkerContract& c,
                                                 std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, c.rank, c.world_size, options);
}
#endif

std::string likely_cause(const WorkerContract& c) {
  if (c.rank == 0)
    return "Likely: MASTER_PORT " + std::to_string(c.master_port) +
           " is in use on this host, or not every rank reached it in time (check the other "
           "ranks' logs, their MASTER_ADDR, and firewalls).";
  return "Likely: rank 0 is not running or not yet listening, MASTER_ADDR " + c.master_addr +
         " is not reachable from this host, or MASTER_PORT " + std::to_string(c.master_port) +
         " is blocked. Check rank 0's log first.";
}

ProcessGroupResult fail(const std::string& error) {
  report(StatusEvent::InitFailed, error);
  return {c10::intrusive_ptr<c10d::ProcessGroup>(), error};
}

}  // namespace

std::chrono::milliseconds default_timeout(const std::string& backend) {
  return backend == "nccl" ? kDefaultNcclTimeout : kDefaultGlooTimeout;
}

std::vector<std::string> available_backends() {
#ifdef DDPLAUNCH_TORCH_NCCL
  return {"gloo", "nccl"};
#else
  return {"gloo"};
#endif
}

ProcessGroupResult init_process_group(const std::string& backend,
                                      std::optional<std::chrono::milliseconds> timeout) {
  ContractResult read = read_contract();
  if (!read.contract) {
    report(StatusEvent::InitBegin, backend);
    return fail("ddplaunch: cannot build the " + backend + " process group: " + read.error);
  }
  return init_process_group(*read.contract, backend, timeout);
}

ProcessGroupResult init_process_group(const WorkerContract& c, const std::string& backend,
                                      std::optional<std::chrono::milliseconds> requested) {
  const auto timeout = requested && requested->count() > 0 ? *requested : default_timeout(backend);
  const double timeout_s = static_cast<double>(timeout.count()) / 1000.0;
  report(StatusEvent::InitBegin, backend);
  std::string bad = check_contract(c);
  if (!bad.empty())
    return fail("ddplaunch: " + where(c, backend, timeout_s) + ": invalid worker contract:" +
                bad + " Start the program with ddplaunch (or torchrun), which sets these.");
#ifndef DDPLAUNCH_TORCH_NCCL
  if (backend == "nccl")
    return fail("ddplaunch: " + where(c, backend, timeout_s) +
                ": this libtorch was built without NCCL (USE_C10D_NCCL), so backend \"nccl\" "
                "is unavailable. Use backend \"gloo\", or rebuild against a CUDA libtorch.");
#endif
  if (backend != "gloo" && backend != "nccl")
    return fail("ddplaunch: " + where(c, backend, timeout_s) + ": unknown backend \"" +
                backend + "\"; supported: " + kSupportedBackends + ".");

  std::string stage = "creating the TCP store";
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(c.master_port);
    opts.isServer = c.rank == 0;
    opts.numWorkers = static_cast<std::size_t>(c.world_size);
    opts.waitWorkers = true;
    opts.timeout = timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(c.master_addr, opts);

    stage = "connecting the " + backend + " process group";
    c10::intrusive_ptr<c10d::ProcessGroup> group;
#ifdef DDPLAUNCH_TORCH_NCCL
    if (backend == "nccl") group = make_nccl(store, c, timeout);
#endif
    if (!group) group = make_gloo(store, c, timeout);
    report(StatusEvent::InitOk, backend);
    return {group, {}};
  } catch (const std::exception& e) {
    // c10::Error::what() carries a C++ backtrace; the first line is the message.
    std::string text = e.what();
    if (const auto* ce = dynamic_cast<const c10::Error*>(&e)) text = ce->what_without_backtrace();
    while (!text.empty() && (text.back() == '.' || text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    return fail("ddplaunch: " + where(c, backend, timeout_s) + ": failed while " + stage + ": " +
                text + ". " + likely_cause(c));
  }
}

}  // namespace ddplaunch::shim
