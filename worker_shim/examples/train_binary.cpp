// A small libtorch data-parallel trainer that uses the ddplaunch shim: an MLP on synthetic
// regression data, gradients all-reduced over the shim's gloo process group. Every rank
// prints the same final checksum of the parameters when training is correct.
//   train_binary [--steps N] [--lr X] [--stall-rank R --stall-after N] [--no-steps]
// --stall-rank/--stall-after: rank R stops making progress after N steps (sleeps for good),
// so the others wait in their next all-reduce: the launcher's hang detection test.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <string>

#include <torch/torch.h>

#include "ddplaunch/shim_torch.h"

namespace {

struct Options {
  int steps = 50;
  double lr = 0.05;
  int stall_rank = -1;
  int stall_after = 0;
  bool report_steps = true;  // --no-steps: never call shim::step() (its collectives are the progress)
};

// Never returns: a rank that stopped making progress, as a deadlock or lost I/O would.
[[gnu::noinline]] void stall_forever() {
  for (;;) pause();
}

bool parse_options(int argc, char** argv, Options& opts) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--stall-rank" || arg == "--stall-after") && i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 0) {
        std::fprintf(stderr, "train_binary: bad value for %s: '%s'\n", arg.c_str(), argv[i]);
        return false;
      }
      (arg == "--stall-rank" ? opts.stall_rank : opts.stall_after) = static_cast<int>(value);
    } else if (arg == "--no-steps") {
      opts.report_steps = false;
    } else if ((arg == "--steps" || arg == "--lr") && i + 1 < argc) {
      char* end = nullptr;
      const char* value = argv[++i];
      if (arg == "--steps") opts.steps = static_cast<int>(std::strtol(value, &end, 10));
      else opts.lr = std::strtod(value, &end);
      if (*end != '\0' || opts.steps < 1 || !(opts.lr > 0)) {
        std::fprintf(stderr, "train_binary: bad value for %s: '%s'\n", arg.c_str(), value);
        return false;
      }
    } else {
      std::fprintf(stderr,
                   "usage: train_binary [--steps N] [--lr X] [--stall-rank R --stall-after N] [--no-steps]  "
                   "(unknown: '%s')\n",
                   arg.c_str());
      return false;
    }
  }
  return true;
}

struct Mlp : torch::nn::Module {
  Mlp() : fc1(register_module("fc1", torch::nn::Linear(16, 32))),
          fc2(register_module("fc2", torch::nn::Linear(32, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1, fc2;
};

// Averages the gradients over all ranks: one all-reduce on a flat copy, then copy back.
void average_gradients(Mlp& model, c10d::ProcessGroup& group) {
  std::vector<torch::Tensor> grads;
  for (auto& p : model.parameters()) grads.push_back(p.grad().reshape({-1}));
  std::vector<torch::Tensor> flat{torch::cat(grads)};
  group.allreduce(flat)->wait();
  flat[0].div_(group.getSize());
  int64_t offset = 0;
  for (auto& p : model.parameters()) {
    auto n = p.grad().numel();
    p.grad().copy_(flat[0].slice(0, offset, offset + n).view_as(p.grad()));
    offset += n;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  if (!parse_options(argc, argv, opts)) return 2;

  // Join the process group (reads the contract, reports init status to ddplaunch).
  auto pg = ddplaunch::shim::init_process_group("gloo");
  if (!pg.group) {
    std::fprintf(stderr, "%s\n", pg.error.c_str());
    return 1;
  }
  const int rank = pg.group->getRank();
  const int world = pg.group->getSize();
  ddplaunch::shim::start_heartbeat(std::chrono::seconds(5));

  // The same full dataset on every rank (fixed seed), then this rank's strided shard.
  torch::manual_seed(1234);
  auto x_all = torch::randn({1024, 16});
  auto w_true = torch::randn({16, 1});
  auto y_all = torch::matmul(x_all, w_true) + 0.1 * torch::randn({1024, 1});
  auto shard = torch::arange(rank, 1024, world);
  auto x = x_all.index_select(0, shard);
  auto y = y_all.index_select(0, shard);

  // Identical initial parameters on every rank.
  torch::manual_seed(0);
  Mlp model;
  torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(opts.lr));

  // Train: local forward/backward, averaged gradients, identical SGD step everywhere.
  double loss_first = 0, loss_last = 0;
  for (int step = 1; step <= opts.steps; ++step) {
    sgd.zero_grad();
    auto loss = torch::mse_loss(model.forward(x), y);
    loss.backward();
    average_gradients(model, *pg.group);
    sgd.step();
    // Progress for the launcher's hang detection (~1 report/s); without it (--no-steps) the
    // shim's group counts each completed collective instead.
    if (opts.report_steps) ddplaunch::shim::step();
    loss_last = loss.item<double>();
    if (step == 1) loss_first = loss_last;
    if (step % 10 == 0) std::printf("step %d loss %.6f\n", step, loss_last);
    if (rank == opts.stall_rank && step == opts.stall_after) {
      std::printf("rank %d stalls after step %d\n", rank, step);
      std::fflush(stdout);
      stall_forever();
    }
  }

  // Report: the checksum must match across ranks.
  double checksum = 0;
  for (auto& p : model.parameters()) checksum += p.to(torch::kDouble).sum().item<double>();
  std::printf("FINAL rank=%d loss_first=%.9g loss_last=%.9g checksum=%.9g\n", rank, loss_first,
              loss_last, checksum);
  std::fflush(stdout);
  ddplaunch::shim::stop_heartbeat();
  return 0;
}
