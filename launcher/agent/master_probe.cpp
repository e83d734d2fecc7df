// Asynchronous TCP probe: one socket, one timer, whichever ends first decides.
#include "agent/master_probe.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace ddplaunch {

namespace {
struct ProbeState {
  ProbeState(boost::asio::io_context& io) : socket(io), timer(io) {}
  boost::asio::ip::tcp::socket socket;
  boost::asio::steady_timer timer;
  std::function<void(const preflight::ProbeResult&)> done;
  preflight::ProbeResult result;
  long timeout_ms = 0;
  bool finished = false;

  void finish(preflight::ProbeStatus status, int error_code) {
    if (finished) return;
    finished = true;
    boost::system::error_code ignored;
    socket.close(ignored);
    timer.cancel();
    result.status = status;
    result.error_code = error_code;
    result.message = preflight::describe_probe(status, result.endpoint, error_code, timeout_ms);
    done(result);
  }
};
}  // namespace

void probe_master_async(boost::asio::io_context& io, const std::string& ip, int port, std::chrono::milliseconds timeout,
                        std::function<void(const preflight::ProbeResult&)> done) {
  auto state = std::make_shared<ProbeState>(io);
  state->done = std::move(done);
  state->timeout_ms = static_cast<long>(timeout.count());
  state->result.endpoint = ip.find(':') != std::string::npos ? "[" + ip + "]:" + std::to_string(port)
                                                             : ip + ":" + std::to_string(port);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(ip, ec);
  if (ec || port < 1 || port > 65535) {
    boost::asio::post(io, [state] { state->finish(preflight::ProbeStatus::Error, EINVAL); });
    return;
  }
  state->timer.expires_after(timeout);
  state->timer.async_wait([state](const boost::system::error_code& e) {
    if (!e) state->finish(preflight::ProbeStatus::TimedOut, 0);
  });
  state->socket.async_connect(boost::asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port)),
                              [state](const boost::system::error_code& e) {
                                if (e == boost::asio::error::operation_aborted) return;
                                if (!e) return state->finish(preflight::ProbeStatus::Connected, 0);
                                state->finish(preflight::classify_connect_errno(e.value()), e.value());
                              });
}

}  // namespace ddplaunch
