// Bounded random-mutation fuzzing of the rendezvous: the codec (mutated valid frames, random
// length prefixes, random read sizes) and the admission path (a real Server on 127.0.0.1 fed
// mutated handshakes). Fixed seed, fixed iteration counts and a time bound: a few seconds in CI.
// Deeper runs: the optional libFuzzer target (tests/fuzz, -DDDPLAUNCH_LIBFUZZER=ON with clang).
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <random>

#include "../../../rendezvous/src/wire.h"
#include "rendezvous/rendezvous_test_support.h"
#include "ddplaunch/rendezvous/codec.h"

using namespace rdzv_test;
namespace detail = ddplaunch::rendezvous::detail;

namespace {

constexpr std::uint32_t kSeed = 20261203;
constexpr auto kTimeBound = 4s;  // per test: stop early on a slow machine, never run long

// Valid frames of every kind a peer sends or receives: the starting points of mutation.
std::vector<std::string> seed_bodies() {
  std::vector<std::string> bodies;
  Frame join;
  join.kind = "join";
  join.job_id = "job-a";
  join.fields = {{"protocol", "1"}, {"proof", std::string(64, 'a')}};
  detail::put_facts(join.fields, "f.", facts("node-1", 8, 1));
  bodies.push_back(encode_body(join));
  Frame assign;
  assign.kind = "assign";
  assign.job_id = "job-a";
  Assignment a;
  a.node_count = 2;
  a.world_size = 16;
  a.rank_offset = 8;
  a.node_rank = 1;
  a.worker_master_addr = "10.0.0.1";
  detail::put_assignment(assign, a);
  NodeRecord r0, r1;
  r0.facts = facts("node-0", 8, 0);
  r1.facts = facts("node-1", 8, 1);
  r1.node_rank = 1;
  bodies.push_back(encode_body(assign, detail::encode_node_list({r0, r1})));
  Frame msg;
  msg.kind = "msg";
  msg.job_id = "job-a";
  msg.generation = Generation{3};
  msg.subtype = "worker_failed";
  msg.fields = {{"tail", "line 1\nline=2\\"}, {"code", "1"}};
  bodies.push_back(encode_body(msg));
  Frame hello;
  hello.kind = "hello";
  hello.fields = {{"nonce", "00112233"}, {"protocol", "1"}};
  bodies.push_back(encode_body(hello));
  return bodies;
}

// One to four random edits: bit flips, bytes the codec cares about, inserts, deletes, repeats.
std::string mutate(std::mt19937& rng, std::string s) {
  static const char kSpecial[] = {'\n', '=', '\\', '\0', '\x7f', '\xff', '0', '9', '-', 'e', 'n'};
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits; ++e) {
    std::size_t at = pick(s.size() + 1);
    switch (pick(6)) {
      case 0: if (at < s.size()) s[at] = static_cast<char>(s[at] ^ (1 << pick(8))); break;
      case 1: if (at < s.size()) s[at] = kSpecial[pick(sizeof kSpecial)]; break;
      case 2: s.insert(at, 1 + pick(8), static_cast<char>(pick(256))); break;
      case 3: s.erase(at, 1 + pick(16)); break;
      case 4: if (at < s.size()) s.insert(at, s.substr(at, 1 + pick(64))); break;
      default: s.resize(pick(s.size() + 1)); break;
    }
  }
  return s;
}

std::string with_prefix(std::uint32_t n, const std::string& body) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  return out + body;
}

bool same_frame(const Frame& a, const Frame& b) {
  return a.kind == b.kind && a.job_id == b.job_id && a.generation == b.generation && a.subtype == b.subtype &&
         a.fields == b.fields;
}

}  // namespace

TEST(RendezvousFuzz, MutatedFramesDecodeOrFailCleanlyAndRoundTrip) {
  std::mt19937 rng(kSeed);
  const auto seeds = seed_bodies();
  const auto deadline = Clock::now() + kTimeBound;
  int decoded = 0, rejected = 0;
  for (int i = 0; i < 40000 && Clock::now() < deadline; ++i) {
    std::string body = mutate(rng, seeds[i % seeds.size()]);
    std::string error;
    auto frame = decode_body(body, error);
    if (!frame) {
      EXPECT_FALSE(error.empty()) << "rejected without a reason";
      ++rejected;
      continue;
    }
    ++decoded;
    // What decodes re-encodes to a body that decodes to the same frame.
    auto again = decode_body(encode_body(*frame), error);
    ASSERT_TRUE(again) << error;
    ASSERT_TRUE(same_frame(*frame, *again));
    // The typed readers on top take any decoded frame without crashing or over-allocating.
    NodeFacts node;
    Assignment assignment;
    std::string typed_error;
    if (detail::get_facts(frame->fields, "f.", node, typed_error)) {
      EXPECT_EQ(node.hostname.find('\n'), std::string::npos) << "facts are stored printable";
    }
    detail::get_assignment(*frame, assignment, typed_error);
    ASSERT_LE(assignment.nodes.capacity(), frame->fields.size()) << "reserved on a claimed node count";
  }
  EXPECT_GT(decoded, 100) << "the mutations should keep some frames valid";
  EXPECT_GT(rejected, 100);
}

TEST(RendezvousFuzz, FrameReaderWithRandomPrefixesAndReadSizesStaysBounded) {
  std::mt19937 rng(kSeed + 1);
  const auto seeds = seed_bodies();
  const std::size_t limit = 16 << 10;
  const auto deadline = Clock::now() + kTimeBound;
  int streams = 0, frames_read = 0, streams_failed = 0;
  for (int stream = 0; stream < 400 && Clock::now() < deadline; ++stream) {
    std::string bytes;
    for (int piece = 0; piece < 8; ++piece) {
      std::string body = seeds[rng() % seeds.size()];
      switch (rng() % 4) {
        case 0: bytes += with_prefix(static_cast<std::uint32_t>(body.size()), body); break;  // valid
        case 1: bytes += with_prefix(static_cast<std::uint32_t>(body.size()), mutate(rng, body)); break;
        case 2: bytes += with_prefix(static_cast<std::uint32_t>(rng()), body); break;  // any length
        default: bytes += with_prefix(static_cast<std::uint32_t>(rng() % (limit + 64)), mutate(rng, body)); break;
      }
    }
    FrameReader reader(limit);
    bool failed = false;
    ++streams;
    for (std::size_t at = 0; at < bytes.size() && !failed;) {
      std::size_t n = std::min<std::size_t>(1 + rng() % 5000, bytes.size() - at);
      reader.append(bytes.data() + at, n);
      at += n;
      Frame frame;
      std::string error;
      for (int frames = 0; frames < 64; ++frames) {
        auto status = reader.next(frame, error);
        if (status == FrameReader::Status::kNeedMore) {
          // Waiting for at most one frame: never more than the limit plus its prefix.
          ASSERT_LT(reader.buffered(), limit + 4);
          break;
        }
        if (status == FrameReader::Status::kError) {
          EXPECT_FALSE(error.empty());
          EXPECT_EQ(reader.next(frame, error), FrameReader::Status::kError) << "a failed stream stays failed";
          failed = true;
          ++streams_failed;
          break;
        }
        ++frames_read;
      }
    }
  }
  EXPECT_GT(streams, 0);
  EXPECT_GT(frames_read, 100) << "valid frames before the bad ones are read";
  EXPECT_GT(streams_failed, 100);
}

namespace {

// A stranger on 127.0.0.1 that sends bytes and never reads: the server must cope alone.
struct Stranger {
  int fd = -1;
  explicit Stranger(std::uint16_t port) : fd(connect_loopback(port)) {}
  ~Stranger() { if (fd >= 0) ::close(fd); }
  Stranger(const Stranger&) = delete;
  Stranger& operator=(const Stranger&) = delete;
  void send(const std::string& bytes) const {
    if (fd >= 0) (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
};

}  // namespace

TEST(RendezvousFuzz, ServerSurvivesMutatedHandshakesAndAdmitsARealNodeAfter) {
  boost::asio::io_context io;
  auto options = fast_server(1);
  options.token = "fuzz-token";
  options.handshake_timeout = 200ms;
  int refused = 0, plans = 0;
  ServerCallbacks callbacks;
  callbacks.plan = [&](Generation, const std::vector<NodeRecord>&) { ++plans; return test_plan(); };
  callbacks.on_refused = [&](const std::string&, const std::string&) { ++refused; };
  Server server(io, options, callbacks);
  ASSERT_EQ(server.listen("127.0.0.1", 0), "");
  run_for(io, 20ms);
  const auto heap_before = mallinfo2().uordblks;

  std::mt19937 rng(kSeed + 2);
  const auto seeds = seed_bodies();
  const std::string join = seeds[0];
  std::deque<std::unique_ptr<Stranger>> open;
  const auto deadline = Clock::now() + kTimeBound;
  int sent = 0;  // strangers that got connected
  for (int i = 0; i < 600 && Clock::now() < deadline; ++i) {
    auto stranger = std::make_unique<Stranger>(server.port());
    sent += stranger->fd >= 0 ? 1 : 0;
    std::string body = mutate(rng, join);
    switch (rng() % 4) {
      case 0: stranger->send(with_prefix(static_cast<std::uint32_t>(rng()), body)); break;  // any length
      case 1: stranger->send(body); break;                                                  // no prefix at all
      default: stranger->send(with_prefix(static_cast<std::uint32_t>(body.size()), body)); break;
    }
    open.push_back(std::move(stranger));
    if (open.size() > 24) open.pop_front();  // some linger (half-open), most go
    io.restart();
    io.poll();
  }
  open.clear();
  ASSERT_TRUE(run_until(io, [&] { return refused >= sent; }, 5000ms)) << refused << " of " << sent << " dropped";
  run_for(io, 300ms);  // every stranger is past the handshake timeout
  EXPECT_EQ(server.joined_count(), 0) << "no mutated join got in without the token";
  const auto heap_after = mallinfo2().uordblks;
  EXPECT_LT(heap_after, heap_before + (4u << 20)) << "the server kept memory for strangers that left";

  auto options_client = fast_client(server.port());
  options_client.token = "fuzz-token";
  auto real = make_client(io, options_client);
  real.client->join(facts("real"));
  ASSERT_TRUE(run_until(io, [&] { return !real.log->assignments.empty(); }))
      << (real.log->losses.empty() ? std::string("no assignment") : real.log->losses[0]);
  EXPECT_EQ(plans, 1);
}
