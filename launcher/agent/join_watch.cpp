// JoinWatch: see join_watch.h.
#include "agent/join_watch.h"

#include <algorithm>

#include "agent/master_probe.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

JoinWatch::JoinWatch(boost::asio::io_context& io, const NodePlan& plan, NodeEvents& events)
    : io_(io), plan_(plan), events_(events), timer_(io) {}

void JoinWatch::start(const rendezvous::Client& client) {
  client_ = &client;
  arm();
}

void JoinWatch::close() {
  client_ = nullptr;
  timer_.cancel();
}

void JoinWatch::arm() {
  const double interval = std::max(2.0, plan_.config.connect_timeout_s);
  timer_.expires_after(seconds_to_ms(interval));
  timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || !client_) return;
    if (!client_->local_address().empty()) {  // connected: waiting for the other nodes
      events_.publish(node_event::JoinConnected{});
      return arm();
    }
    const auto timeout = std::min(seconds_to_ms(plan_.config.connect_timeout_s), std::chrono::milliseconds(2000));
    probe_master_async(io_, plan_.master_ip, plan_.rendezvous_port, timeout,
                       [this, interval](const preflight::ProbeResult& probe) { on_probe(probe, interval); });
  });
}

void JoinWatch::on_probe(const preflight::ProbeResult& probe, double interval_s) {
  if (!client_) return;  // closed while the probe ran
  const JoinProbe outcome = probe.ok()                                          ? JoinProbe::Answered
                            : probe.status == preflight::ProbeStatus::Refused ? JoinProbe::Refused
                            : probe.status == preflight::ProbeStatus::Error   ? JoinProbe::LocalError
                                                                              : JoinProbe::Unanswered;
  events_.publish(node_event::JoinProbed{outcome, probe.message, interval_s});
  if (client_) arm();  // not closed by what the probe caused (the node gave up)
}

}  // namespace ddplaunch
