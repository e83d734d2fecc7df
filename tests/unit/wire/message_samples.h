// One sample of every launcher message, for the table-driven wire tests: the message as its
// sender encodes it, and a way back (decode, then encode again) to check that a message
// survives the trip whole. Text is plain here; hostile text has its own table in the tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wire/launcher_messages.h"
#include "wire/master_orders.h"

namespace ddplaunch::message_samples {

// decode, then encode again with the message's own generation; nullopt when refused.
using Reencode = std::optional<rendezvous::Message> (*)(const rendezvous::Message&);

struct Sample {
  messages::Kind kind;
  rendezvous::Message sent;
  Reencode back;
};

template <class Payload>
std::optional<rendezvous::Message> again(const std::optional<Payload>& payload, Generation generation) {
  if (!payload) return std::nullopt;
  return messages::encode(generation, *payload);
}

inline FailureReport sample_failure() {
  WorkerFailure f;
  f.node_rank = 1;
  f.global_rank = 5;
  f.local_rank = 1;
  f.pid = 4321;
  f.phase = FailurePhase::Init;
  f.kind = FailureKind::InitFailed;
  f.status = ExitStatus{false, 3, 0, false};
  f.detail = "ncclCommInitRank failed: unhandled cuda error";
  f.init_signature = "unhandled cuda error";
  f.tail = {"line a", "line b"};
  f.log_file = "/logs/rank5.log";
  return FailureReport{f, "gpu07"};
}

inline messages::RankStates sample_rank_states() {
  RankReport a;
  a.rank = 2;
  a.pid = 77;
  a.phase = RankPhase::Running;
  a.init_entries = 1;
  a.state = "running";
  a.steps = 120;
  a.max_interval_ms = 450;
  a.progress_age_ms = 2300;
  a.section = "checkpoint";
  a.cpu_millicores = 950;
  RankReport b;
  b.rank = 3;
  b.pid = 78;
  b.phase = RankPhase::Init;
  NodeSignals signals;
  signals.steal = 0.01;
  signals.cpu_pressure = 0.8125;
  signals.throttled = 0.92;
  signals.throttled_cgroup = "/batch/job7";
  return messages::RankStates{"gpu07", {a, b}, "/logs", signals};
}

inline messages::ProbeResults sample_probe_results() {
  preflight::ProbedLink ok;
  ok.pair = {0, 1};
  ok.ifname = "eth0";
  ok.from_address = "10.0.0.1";
  ok.to_endpoint = "10.0.0.2:41233";
  ok.result.ok = true;
  ok.result.rtt_ms = 0.25;
  ok.result.mbit_per_s = 9400;
  preflight::ProbedLink failed = ok;
  failed.pair = {1, 0};
  failed.result = {};
  failed.result.error = "timed out after 2 s";
  return messages::ProbeResults{{ok, failed}};
}

inline std::vector<timeline::Event> sample_events() {
  timeline::Event e;
  e.at_us = 1500;
  e.generation = Generation{2};
  e.node = 1;
  e.rank = 3;
  e.name = "running";
  e.category = "rank";
  e.detail = "after 2.1 s of init";
  return {e};
}

inline RankStack sample_stack(int rank) {
  RankStack s;
  s.rank = rank;
  s.pid = 4000 + rank;
  s.source = "python";
  s.text = "  File \"/w/train.py\", line 3 in main\n";
  return s;
}

// Every kind of messages::Kind once, in the enum's order.
inline std::vector<Sample> all() {
  using namespace messages;
  const Generation g{4};
  return {
      {Kind::WorkerFailed, encode(g, sample_failure()),
       [](const rendezvous::Message& m) { return again(decode_failure(m), m.generation); }},
      {Kind::NodeFinished, encode(g, NodeFinished{3, "rank 2 exited with 3\nrank 3 stopped"}),
       [](const rendezvous::Message& m) { return again(decode_node_finished(m), m.generation); }},
      {Kind::NodeProblem, encode(g, NodeProblem{"no GPU visible", 2}),
       [](const rendezvous::Message& m) { return again(decode_node_problem(m), m.generation); }},
      {Kind::NodeReport, encode(g, NodeReport{true, "eth0", "clock skew 3 s"}),
       [](const rendezvous::Message& m) { return again(decode_node_report(m), m.generation); }},
      {Kind::RankStates, encode(g, sample_rank_states()),
       [](const rendezvous::Message& m) { return again(decode_rank_states(m), m.generation); }},
      {Kind::ProbeResults, encode(g, sample_probe_results()),
       [](const rendezvous::Message& m) { return again(decode_probe_results(m), m.generation); }},
      {Kind::TimelineEvents, encode(g, TimelineEvents{987654321, sample_events()}),
       [](const rendezvous::Message& m) { return again(decode_timeline_events(m), m.generation); }},
      {Kind::RankOutput, encode(g, RankOutput{2, "step 1\nstep 2\n", 5}),
       [](const rendezvous::Message& m) { return again(decode_rank_output(m), m.generation); }},
      {Kind::Restart, encode(g, Restart{"rank 5 failed in init"}),
       [](const rendezvous::Message& m) { return again(decode_restart(m), m.generation); }},
      {Kind::Stop, encode(g, Stop{"the restart budget is spent", 3}),
       [](const rendezvous::Message& m) { return again(decode_stop(m), m.generation); }},
      {Kind::JobEnd, encode(g, JobEnd{7}),
       [](const rendezvous::Message& m) { return again(decode_job_end(m), m.generation); }},
      {Kind::Resume, encode_resume(g),
       [](const rendezvous::Message& m) -> std::optional<rendezvous::Message> {
         auto order = decode_master_order(m);
         if (!order || !std::holds_alternative<Resume>(*order)) return std::nullopt;
         return encode_resume(m.generation);
       }},
      {Kind::ProbeVerdict, encode(g, ProbeVerdict{"ib0"}),
       [](const rendezvous::Message& m) { return again(decode_probe_verdict(m), m.generation); }},
      {Kind::Standby, encode(g, Standby{"you are a spare", "0123abcd"}),
       [](const rendezvous::Message& m) { return again(decode_standby(m), m.generation); }},
      {Kind::OutputFilter, encode(g, OutputFilter{{1, 5, 6, 7}}),
       [](const rendezvous::Message& m) { return again(decode_output_filter(m), m.generation); }},
      {Kind::FollowRank, encode(g, FollowRank{2, 30}),
       [](const rendezvous::Message& m) { return again(decode_follow_rank(m), m.generation); }},
      {Kind::CollectStacks, encode(g, CollectStacks{9}),
       [](const rendezvous::Message& m) { return again(decode_collect_stacks(m), m.generation); }},
      {Kind::RankStacks, encode(g, RankStacksReply{9, "gpu07", {sample_stack(0), sample_stack(1)}}),
       [](const rendezvous::Message& m) { return again(decode_rank_stacks(m), m.generation); }},
      {Kind::DebugStopped,
       encode(g, DebugStopped{3, 1, 4242, "h2", "/w/train.py", "load_batch", "x = y", "raised ValueError", 88}),
       [](const rendezvous::Message& m) { return again(decode_debug_stopped(m), m.generation); }},
      {Kind::DebugOutput, encode(g, DebugOutput{3, "(Pdb) ", true, true, false}),
       [](const rendezvous::Message& m) { return again(decode_debug_output(m), m.generation); }},
      {Kind::DebugResumed, encode(g, DebugResumed{3}),
       [](const rendezvous::Message& m) { return again(decode_debug_resumed(m), m.generation); }},
      {Kind::DebugInput, encode(g, DebugInput{3, "p x"}),
       [](const rendezvous::Message& m) { return again(decode_debug_input(m), m.generation); }},
      {Kind::DebugAttachGdb, encode(g, DebugAttachGdb{3}),
       [](const rendezvous::Message& m) { return again(decode_debug_attach_gdb(m), m.generation); }},
  };
}

}  // namespace ddplaunch::message_samples
