// report() and the heartbeat thread: one AF_UNIX datagram per event to the launcher's
// status socket. Best-effort by design — a worker must never block or fail because the
// launcher is gone or slow, so every error here is swallowed.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

#include "ddplaunch/shim.h"

namespace ddplaunch::shim {
namespace {

namespace c = ddplaunch::contract;

template <typename Int>
bool env_int(const char* name, Int& out) {
  const char* value = std::getenv(name);
  return value && c::detail::parse_int(std::string_view(value), out);
}

void send_datagram(const char* path, const std::string& line) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof(addr.sun_path)) return;
  std::memcpy(addr.sun_path, path, len + 1);
  // A socket per message: no shared state, so it is fork-safe and thread-safe.
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  ::sendto(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
           reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  ::close(fd);
}

// Heartbeat state lives on the heap and is never destroyed: a heartbeat left running at
// exit must not meet a destroyed mutex or a joinable std::thread's destructor (terminate).
struct Heartbeat {
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
  bool running = false;
  unsigned long epoch = 0;  // bumped by every start and stop; a thread runs while it matches
  pid_t owner = 0;          // the process that started the thread; a forked child has none
};

Heartbeat& heartbeat() {
  static Heartbeat* h = new Heartbeat;
  return *h;
}

// After fork() the child holds a std::thread naming the parent's thread: forget it
// without touching it (neither join nor detach is valid on it).
void forget_foreign_thread(Heartbeat& h) {
  new (&h.thread) std::thread();
  h.running = false;
}

}  // namespace

void report(contract::StatusEvent event, std::string_view detail) noexcept {
  try {
    const char* path = std::getenv(c::kStatusSocket);
    if (!path || !*path) return;
    long rank = -1;
    if (!env_int(c::kRank, rank) || rank < 0) return;  // the launcher would reject it
    c::GenerationNumber generation = 0;
    if (std::getenv(c::kGeneration) && !env_int(c::kGeneration, generation)) return;  // unsigned: no sign
    c::StatusMessage m;
    m.event = event;
    m.rank = static_cast<int>(rank);
    m.generation = generation;
    m.pid = static_cast<long>(::getpid());
    m.detail = std::string(detail);
    send_datagram(path, c::format_status(m));
  } catch (...) {
    // Out of memory while formatting: reporting is best-effort.
  }
}

void start_heartbeat(std::chrono::milliseconds interval) {
  if (interval < std::chrono::milliseconds(10)) interval = std::chrono::milliseconds(10);
  Heartbeat& h = heartbeat();
  std::lock_guard lock(h.mutex);
  if (h.running && h.owner == ::getpid()) return;
  if (h.running) forget_foreign_thread(h);
  unsigned long mine = ++h.epoch;
  try {
    h.thread = std::thread([&h, interval, mine] {
      std::unique_lock lock(h.mutex);
      while (h.epoch == mine) {
        lock.unlock();
        report(c::StatusEvent::Heartbeat);
        lock.lock();
        h.wake.wait_for(lock, interval, [&h, mine] { return h.epoch != mine; });
      }
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddplaunch shim: could not start the heartbeat thread (%s); "
                         "the launcher will not receive heartbeats from this worker\n", e.what());
    return;
  }
  h.running = true;
  h.owner = ::getpid();
}

void stop_heartbeat() {
  Heartbeat& h = heartbeat();
  std::thread thread;
  {
    std::lock_guard lock(h.mutex);
    if (!h.running) return;
    if (h.owner != ::getpid()) {  // forked child: nothing of ours to join
      forget_foreign_thread(h);
      return;
    }
    h.running = false;
    ++h.epoch;
    thread = std::move(h.thread);
  }
  h.wake.notify_all();
  if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
  else if (thread.joinable()) thread.detach();
}

}  // namespace ddplaunch::shim
