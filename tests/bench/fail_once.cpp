// The restart benchmark's worker as a compiled program (bench/run restart): the same
// contract as bench/support/fail_once.sh, without a shell's start-up (env, bash and
// their locale loading take several ms per rank on these machines, and four of them on two
// cores dominate a restart). In generation 0 every rank writes up.0.RANK; rank
// $BENCH_FAIL_RANK waits until all $WORLD_SIZE ranks are up (NCCL's init fails only once every
// rank has reached it; at most 10 s), then writes its CLOCK_REALTIME to
// $BENCH_STAMP_DIR/fail.RANK, prints NCCL's init error and exits 3; the others sleep like
// ranks blocked in init. In generation >= 1 every rank writes start.GEN.RANK and exits 0.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void stamp(const std::string& name) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const std::string path = env_or("BENCH_STAMP_DIR", "/tmp") + "/" + name;
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, "%ld.%09ld\n", static_cast<long>(now.tv_sec), now.tv_nsec);
    std::fclose(f);
  }
}

// Until up.0.R exists for every rank R < world (bounded: 10 s, polled every 0.2 ms).
void wait_for_every_rank(int world) {
  const std::string dir = env_or("BENCH_STAMP_DIR", "/tmp");
  for (int round = 0; round < 50000; ++round) {
    int up = 0;
    for (int r = 0; r < world; ++r) up += access((dir + "/up.0." + std::to_string(r)).c_str(), F_OK) == 0;
    if (up >= world) return;
    usleep(200);
  }
}

}  // namespace

int main() {
  const std::string generation = env_or("DDPLAUNCH_GENERATION", env_or("TORCHELASTIC_RESTART_COUNT", "0").c_str());
  const std::string rank = env_or("RANK", "0");
  if (generation == "0") {
    stamp("up.0." + rank);
    if (rank != env_or("BENCH_FAIL_RANK", "1")) {
      sleep(3600);
      return 0;
    }
    wait_for_every_rank(std::atoi(env_or("WORLD_SIZE", "1").c_str()));
    stamp("fail." + rank);
    std::fprintf(stderr, "NCCL error in ncclCommInitRank: unhandled system error (fail_once, rank %s)\n", rank.c_str());
    return 3;
  }
  stamp("start." + generation + "." + rank);
  std::printf("rank %s started in generation %s\n", rank.c_str(), generation.c_str());
  return 0;
}
