// The master's stack rounds: one request to every node for its ranks' stacks, the answers
// gathered (a round ends when every node asked has answered, or after kRoundBound), grouped
// by identical stack with the likely stuck rank named, written to --log-dir, and the latest
// few kept for `ddplaunch stacks`. It only gathers: who asks, and what a hang round leads
// to, is the HangInvestigation's.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "ddplaunch/rendezvous/generation.h"
#include "policy/stack_report.h"

namespace ddplaunch {

class StackRounds {
 public:
  static constexpr auto kRoundBound = std::chrono::seconds(6);  // a node's tools are bounded far below
  static constexpr std::size_t kFinishedKept = 8;
  using Done = std::function<void(const std::string& text, const std::vector<int>& stuck)>;
  using AskNodes = std::function<void(long round)>;  // sends the request to every node

  StackRounds(boost::asio::io_context& io, std::string log_dir, AskNodes ask);

  // A new round of generation `generation` (`world` ranks) asking `node_ranks`; `silent`:
  // the ranks without progress that caused it (none: taken on request). Its number.
  long start(std::string heading, std::vector<int> silent, std::vector<int> node_ranks, Generation generation,
             int world, Done done);
  // A node's answer: its ranks' stacks (the node is who the connection says, not the payload).
  void on_answer(int node_rank, long round, std::vector<RankStack> stacks, const std::string& host);
  bool in_flight(long round) const { return rounds_.count(round) > 0; }
  const std::string* finished(long round) const;
  void close();  // every pending round ends unanswered (the job ended)

 private:
  struct Round {
    std::string heading;
    std::vector<int> stuck;
    std::vector<int> waiting_for;  // node ranks that have not answered
    std::vector<RankStack> stacks;
    Generation generation;
    int world = 0;
    Done done;
    std::unique_ptr<boost::asio::steady_timer> deadline;
  };
  void finish(long round);
  std::string write_file(long round, const std::string& text) const;

  boost::asio::io_context& io_;
  std::string log_dir_;
  AskNodes ask_;
  long next_round_ = 0;
  std::map<long, Round> rounds_;
  std::map<long, std::string> finished_;
  // The last conclusive "likely stuck" of a generation's hang rounds (policy/stack_report).
  std::vector<int> stuck_verdict_;
  std::optional<Generation> stuck_verdict_generation_;  // none before the first verdict
};

}  // namespace ddplaunch
