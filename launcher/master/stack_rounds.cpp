// StackRounds: see stack_rounds.h.
#include "master/stack_rounds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "output/log_directory.h"
#include "output/worker_output.h"
#include "policy/stacks_query.h"

namespace ddplaunch {

namespace {
constexpr std::size_t kMaxStacksFileBytes = 8 << 20;  // a stacks file of a huge job is cut there
}  // namespace

StackRounds::StackRounds(boost::asio::io_context& io, std::string log_dir, AskNodes ask)
    : io_(io), log_dir_(std::move(log_dir)), ask_(std::move(ask)) {}

long StackRounds::start(std::string heading, std::vector<int> silent, std::vector<int> node_ranks, Generation generation,
                        int world, Done done) {
  const long number = ++next_round_;
  Round& round = rounds_[number];
  round.heading = std::move(heading);
  round.stuck = std::move(silent);
  round.waiting_for = std::move(node_ranks);
  round.generation = generation;
  round.world = world;
  round.done = std::move(done);
  round.deadline = std::make_unique<boost::asio::steady_timer>(io_, kRoundBound);
  round.deadline->async_wait([this, number](const boost::system::error_code& ec) {
    if (!ec) finish(number);
  });
  if (ask_) ask_(number);
  return number;
}

void StackRounds::on_answer(int node_rank, long number, std::vector<RankStack> stacks, const std::string& host) {
  auto it = rounds_.find(number);
  if (it == rounds_.end()) return;  // finished already (a slow node)
  Round& round = it->second;
  auto waiting = std::find(round.waiting_for.begin(), round.waiting_for.end(), node_rank);
  if (waiting == round.waiting_for.end()) return;  // not asked, or answered twice
  round.waiting_for.erase(waiting);
  for (auto& s : stacks) {
    s.node = node_rank;
    s.host = host;
    round.stacks.push_back(std::move(s));
  }
  if (round.waiting_for.empty()) finish(number);
}

const std::string* StackRounds::finished(long round) const {
  auto it = finished_.find(round);
  return it == finished_.end() ? nullptr : &it->second;
}

void StackRounds::finish(long number) {
  auto it = rounds_.find(number);
  if (it == rounds_.end()) return;
  Round round = std::move(it->second);
  rounds_.erase(it);
  round.deadline->cancel();
  std::string text = render_grouped_stacks(round.stacks, round.stuck, round.heading, round.world);
  const std::vector<int> earlier =
      stuck_verdict_generation_ == round.generation ? stuck_verdict_ : std::vector<int>{};
  const std::vector<int> stuck = likely_stuck(round.stacks, round.stuck, earlier);
  if (!round.stuck.empty() && stuck.size() < round.stuck.size()) {
    stuck_verdict_ = stuck;
    stuck_verdict_generation_ = round.generation;
  }
  if (std::string file = write_file(number, text); !file.empty()) text += "  (also in " + file + ")\n";
  if (round.stuck.empty()) spdlog::info("stacks taken on request (ddplaunch stacks), round {}", number);
  else spdlog::warn("{}", text);
  finished_[number] = text;
  while (finished_.size() > kFinishedKept) finished_.erase(finished_.begin());
  if (round.done) round.done(text, stuck);
}

// --log-dir/stacks-<round>.txt, in the directory opened once, refusing a symlink like the rank
// logs do.
std::string StackRounds::write_file(long number, const std::string& text) const {
  if (log_dir_.empty()) return "";
  auto dir = LogDirectory::open_once(log_dir_);
  if (!dir) return "";
  const std::string name = fmt::format("stacks-{}.txt", number);
  const std::string path = (*dir)->shown(name);
  // Only the newest kStacksFilesKept rounds stay (rounds are numbered in order).
  ::unlinkat((*dir)->fd(), fmt::format("stacks-{}.txt", number - kStacksFilesKept).c_str(), 0);
  int fd = (*dir)->open_file(name, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return "";
  struct stat opened {};
  const bool regular = ::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode);  // not a planted FIFO
  const std::string_view bounded = std::string_view(text).substr(0, kMaxStacksFileBytes);
  if (regular) write_fully(fd, bounded);
  ::close(fd);
  return regular ? path : "";
}

void StackRounds::close() {
  for (auto& [number, round] : rounds_) round.deadline->cancel();
  rounds_.clear();
}

}  // namespace ddplaunch
