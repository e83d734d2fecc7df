// Random bytes drawn a page at a time: each draw differs from every other, a forked child
// never hands out what its parent does, and a nonce is still 64 hex characters.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <set>
#include <string>

#include "../../../rendezvous/src/random_pool.h"
#include "ddplaunch/rendezvous/token_proof.h"

namespace ddplaunch::rendezvous::detail {
namespace {

std::string draw32() {
  std::array<unsigned char, 32> bytes{};
  if (!draw_random(bytes.data(), bytes.size())) return {};
  return std::string(bytes.begin(), bytes.end());
}

TEST(RandomPool, EveryDrawDiffersAcrossMoreThanOnePageOfThem) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {  // 32 KB: the pool is refilled several times
    const std::string drawn = draw32();
    ASSERT_EQ(drawn.size(), 32u);
    EXPECT_TRUE(seen.insert(drawn).second) << "draw " << i << " repeated an earlier one";
  }
}

TEST(RandomPool, AForkedChildDrawsWhatItsParentNeverDoes) {
  ASSERT_EQ(draw32().size(), 32u);  // the pool now holds bytes the parent will hand out next
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string drawn = draw32();
    const bool written = drawn.size() == 32 && write(pipe_fds[1], drawn.data(), drawn.size()) == 32;
    _exit(written ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::array<char, 32> from_child{};
  std::size_t got = 0;
  while (got < from_child.size()) {
    const ssize_t n = read(pipe_fds[0], from_child.data() + got, from_child.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(got, from_child.size());
  const std::string child_draw(from_child.begin(), from_child.end());
  for (int i = 0; i < 200; ++i) EXPECT_NE(draw32(), child_draw) << "the parent's draw " << i << " was the child's";
}

TEST(RandomPool, ADrawLargerThanTheLimitIsRefused) {
  std::array<unsigned char, kMaxRandomDraw + 1> bytes{};
  EXPECT_FALSE(draw_random(bytes.data(), bytes.size()));
}

TEST(RandomPool, NoncesAreHexOfTheirFullLengthAndDistinct) {
  const std::string a = random_nonce(), b = random_nonce();
  EXPECT_EQ(a.size(), kNonceHexChars);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace ddplaunch::rendezvous::detail
