// RendezvousHost: see rendezvous_host.h.
#include "agent/rendezvous_host.h"

#include <unistd.h>

#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "master/dropped_connections_log.h"
#include "ddplaunch/base/time_units.h"
#include "ddplaunch/rendezvous/codec.h"
#include "ddplaunch/preflight/port_holder.h"
#include "ddplaunch/preflight/resolve.h"
#include "output/join_progress.h"

namespace ddplaunch {

namespace {

CoordinatorSettings coordinator_settings(const NodePlan& plan, EtcdNodeLink* etcd) {
  CoordinatorSettings settings;
  settings.config = plan.config;
  settings.worker_master_addr = plan.master_ip;
  settings.master_is_loopback = preflight::is_loopback(plan.master_ip);
  settings.worker_bind_address = plan.config.standalone ? "127.0.0.1" : "0.0.0.0";
  settings.doctor = plan.doctor;
  settings.program_fingerprint = plan.facts.program_fingerprint;
  settings.socket_ifname = plan.facts.socket_ifname;
  if (etcd) {  // etcd: elected; the state goes to etcd after each decision, fenced by the seat
    settings.elected = true;
    settings.save_state = [seat = &etcd->seat()](std::string state, std::function<void()> confirmed) {
      seat->save_state(std::move(state), std::move(confirmed));
    };
    settings.restored_state = etcd->restored_state();
    settings.run_nonce = etcd->seat().run();
  }
  return settings;
}

rendezvous::ServerOptions server_options(const NodePlan& plan, EtcdNodeLink* etcd) {
  const LaunchConfig& c = plan.config;
  rendezvous::ServerOptions options;
  options.job_id = c.job_id;
  options.expected_nodes = c.nodes;
  options.token = c.token;
  options.query_token = plan.query_token;
  options.own_node_secret = plan.own_node_secret;
  options.join_timeout = seconds_to_ms(c.join_timeout_s);
  options.heartbeat_interval = seconds_to_ms(c.heartbeat_interval_s);
  options.heartbeat_timeout = seconds_to_ms(c.heartbeat_timeout_s);
  options.launcher_version = plan.facts.launcher_version;
  options.launcher_assigns_slots = membership_enabled(c);
  options.max_spares = c.membership.spares;
  if (etcd) options.order_revision = std::to_string(etcd->seat().leader_revision());
  return options;
}

}  // namespace

RendezvousHost::RendezvousHost(boost::asio::io_context& io, const NodePlan& plan)
    : io_(io), plan_(plan), tail_linger_timer_(io) {}

// The rendezvous server reports to the JobCoordinator, which decides.
rendezvous::ListenError RendezvousHost::listen(int port, EtcdNodeLink* etcd) {
  const LaunchConfig& c = plan_.config;
  coordinator_ = std::make_unique<JobCoordinator>(io_, coordinator_settings(plan_, etcd));
  rendezvous::ServerCallbacks callbacks;
  callbacks.plan = [this](Generation g, const std::vector<rendezvous::NodeRecord>& nodes) {
    return coordinator_->plan(g, nodes);
  };
  callbacks.on_message = [this](int node, const rendezvous::Message& m) {
    if (node >= 0 && debug_relay_ && debug_relay_->on_message(node, m)) return;
    coordinator_->on_message(node, m);
  };
  callbacks.on_node_lost = [this](const rendezvous::NodeRecord& n, const std::string& why) {
    coordinator_->on_node_lost(n, why);
  };
  callbacks.on_member_joined = [this](const rendezvous::NodeRecord& n) { coordinator_->on_member_joined(n); };
  callbacks.on_progress = [](int joined, int expected, const std::vector<std::string>& missing) {
    show_join_progress(joined, expected, fmt::format("{}", fmt::join(missing, ", ")));
  };
  callbacks.on_join_timeout = [this](const rendezvous::JoinTimeout& t) { coordinator_->on_join_timeout(t); };
  // Strangers can make many drops: the log gets the first few of each interval and a count.
  callbacks.on_refused = [this, drops = std::make_shared<DroppedConnectionLog>(io_)](const std::string& peer,
                                                                                    const std::string& reason) {
    // A worker's c10d store client on this port is the program's mistake, not a stranger:
    // said at once and carried into the job's root cause.
    if (reason.find(rendezvous::kForeignStoreClient) != std::string::npos)
      return coordinator_->on_foreign_store_client(peer);
    drops->note(peer, reason);
  };
  callbacks.status_text = [this]() { return coordinator_->queries().status_text(); };
  if (etcd) coordinator_->queries().attach_etcd_seat(&etcd->seat());
  callbacks.query_text = [this](const std::string& query) {
    if (query.rfind("debug ", 0) == 0) {
      // The asker proved the job's token, or this launcher's own (its user, on this node).
      return debug_relay_ ? debug_relay_->answer_query(query) : std::string("error: this launcher has no debug console");
    }
    return coordinator_->queries().answer(query);
  };
  server_ = std::make_unique<rendezvous::Server>(io_, server_options(plan_, etcd), callbacks);
  coordinator_->attach(*server_);
  coordinator_->take_over();  // etcd: from the last coordinator's state (nothing otherwise)
  if (rendezvous::ListenError error = server_->listen_on(plan_.rendezvous_bind, static_cast<std::uint16_t>(port));
      error.failed()) {
    error.text = fmt::format("cannot host the rendezvous on port {}: {}", port, error.text);
    if (error.port_taken())
      if (std::string holder = preflight::describe_port_holder(port); !holder.empty())
        error.text += "; it is held by " + holder;
    return error;
  }
  port = server_->port();
  if (!c.standalone)
    spdlog::info("hosting the rendezvous on port {} of {} for {} node(s){}", port,
                 fmt::join(server_->listening_on(), ", "), c.nodes,
                 c.token.empty() ? "" : "; joins must prove the token (authentication on)");
  if (c.token.empty())
    spdlog::warn("no rendezvous token: anyone who can reach port {} can join this job, and whoever holds that port "
                 "before this launcher (or while nodes reconnect) can pose as its master and send its workers "
                 "elsewhere; so the other nodes relay no debugger and follow no rank's output for it. Set "
                 "DDPLAUNCH_TOKEN or --token-file on every node (--hosts and ddplaunch-srun make one)",
                 port);
  start_debug_relay();
  return {};
}

void RendezvousHost::drop() {
  if (coordinator_) coordinator_->queries().attach_console(nullptr);
  debug_relay_.reset();  // it asks the coordinator which node holds a rank
  server_.reset();
  coordinator_.reset();
}

// The job's one debug console: its terminal (or the fan-out's), and the transcript
// `ddplaunch debug` reads.
void RendezvousHost::start_debug_relay() {
  const LaunchConfig& c = plan_.config;
  std::string hint = fmt::format("`ddplaunch debug --job {} --master {}:{}`", c.job_id, plan_.master_host,
                                 port_or(plan_.rendezvous_port));
  DebugRelay::Hooks hooks;
  hooks.send_to_node = [this](int node, const rendezvous::Message& m) {
    if (server_) server_->send(node, m);
  };
  hooks.end_job = [this](const debug::StoppedRank& r) {
    if (coordinator_) coordinator_->on_debugger_quit(r.generation, r.rank);
  };
  hooks.interrupt = [] { ::kill(::getpid(), SIGINT); };
  hooks.broadcast = [this](const rendezvous::Message& m) {
    if (server_) server_->broadcast(m);
  };
  debug_relay_ = std::make_unique<DebugRelay>(io_, plan_.console_place, std::move(hint), *coordinator_, std::move(hooks),
                                              seconds_to_ms(c.unattended_stop_s));
  coordinator_->queries().attach_console(debug_relay_.get());  // `ddplaunch debug`'s typed queries
}

void RendezvousHost::on_console_line(const std::string& line) {
  if (debug_relay_) debug_relay_->on_fanout_line(line);
}

void RendezvousHost::set_order_revision(std::int64_t revision) {
  if (server_) server_->set_order_revision(std::to_string(revision));
}

void RendezvousHost::stop_coordinating(const std::string& why) {
  if (!coordinator_) return;
  spdlog::error("this launcher stops coordinating the job: {}", why);
  coordinator_->close();
  if (server_) server_->close();
}

void RendezvousHost::close_console() {
  if (debug_relay_) debug_relay_->close();
}

void RendezvousHost::close_coordinator() {
  if (coordinator_) coordinator_->close();
}

void RendezvousHost::close_server() {
  if (server_ && coordinator_ && coordinator_->queries().tails_unread()) close_server_after_tails(kTailLingerChecks);
  else if (server_) server_->close();  // flushes job_end to the other nodes, bounded
}

// `ddplaunch tail` clients still have a followed rank's last lines to read: the master's
// rendezvous answers their polls a little longer (at most kTailLinger; job_end has gone out).
void RendezvousHost::close_server_after_tails(int checks_left) {
  if (checks_left <= 0 || !coordinator_->queries().tails_unread()) return server_->close();
  tail_linger_timer_.expires_after(kTailLinger / kTailLingerChecks);
  tail_linger_timer_.async_wait([this, checks_left](const boost::system::error_code&) {
    close_server_after_tails(checks_left - 1);
  });
}

}  // namespace ddplaunch
