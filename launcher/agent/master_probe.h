// A TCP probe of the master that never blocks the event loop: connect with a deadline,
// report the outcome in preflight's words. Used while a node cannot join, to say why.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "ddplaunch/preflight/tcp_probe.h"

namespace ddplaunch {

// Calls `done` exactly once, from the event loop, within `timeout` (plus scheduling).
void probe_master_async(boost::asio::io_context& io, const std::string& ip, int port, std::chrono::milliseconds timeout,
                        std::function<void(const preflight::ProbeResult&)> done);

}  // namespace ddplaunch
