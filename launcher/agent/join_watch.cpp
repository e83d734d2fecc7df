// JoinWatch: see join_watch.h.
#include "agent/join_watch.h"

#include <algorithm>

#include "agent/master_probe.h"
#include "ddplaunch/base/time_units.h"

namespace ddplaunch {

JoinWatch::JoinWatch(boost::asio::io_context& io, const NodePlan& plan, JoinWatchHooks hooks)
    : io_(io), plan_(plan), hooks_(std::move(hooks)), timer_(io) {}

void JoinWatch::start() {
  const double interval = std::max(2.0, plan_.config.connect_timeout_s);
  timer_.expires_after(seconds_to_ms(interval));
  timer_.async_wait([this, interval](const boost::system::error_code& ec) {
    if (ec || !hooks_.joining()) return;
    if (hooks_.connected()) {  // connected: waiting for the other nodes
      hooks_.on_connected();
      return start();
    }
    const auto timeout = std::min(seconds_to_ms(plan_.config.connect_timeout_s), std::chrono::milliseconds(2000));
    probe_master_async(io_, plan_.master_ip, plan_.rendezvous_port, timeout,
                       [this, interval](const preflight::ProbeResult& probe) { on_probe(probe, interval); });
  });
}

void JoinWatch::on_probe(const preflight::ProbeResult& probe, double interval_s) {
  const JoinProbe outcome = probe.ok()                                          ? JoinProbe::Answered
                            : probe.status == preflight::ProbeStatus::Refused ? JoinProbe::Refused
                            : probe.status == preflight::ProbeStatus::Error   ? JoinProbe::LocalError
                                                                              : JoinProbe::Unanswered;
  if (hooks_.on_probe(outcome, probe.message, interval_s)) start();
}

}  // namespace ddplaunch
