// The program fingerprint nodes compare (read at every start, so fast): equal bytes
// give equal fingerprints wherever the file lies, one changed byte anywhere changes it (in a
// whole 32-byte block, in the tail, in the length), chunked reads agree with one pass, the
// limit is honoured, and an unreadable file has none.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "file_fingerprint.h"

namespace {

using ddplaunch::bytes_fingerprint;
using ddplaunch::file_fingerprint;

class FileFingerprint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("ddplaunch-fingerprint-{}", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
    return s;
  }
  std::filesystem::path dir_;
};

TEST_F(FileFingerprint, EqualBytesAgreeWhereverTheFileIsAndChunkedReadsAgreeWithOnePass) {
  // Around the 32-byte block and the 16 KiB read buffer, and a few MiB.
  for (std::size_t n : {0u, 1u, 31u, 32u, 33u, 16383u, 16384u, 16385u, 50000u, 3u << 20}) {
    const std::string bytes = pattern(n);
    const std::string a = file_fingerprint(write("a", bytes));
    const std::string b = file_fingerprint(write("b", bytes));
    ASSERT_EQ(a.size(), 16u) << n;
    EXPECT_EQ(a, b) << n;
    EXPECT_EQ(a, fmt::format("{:016x}", bytes_fingerprint(bytes))) << n;
  }
}

TEST_F(FileFingerprint, OneChangedByteAnywhereChangesIt) {
  const std::string bytes = pattern(100000);  // 3125 whole blocks, no tail
  const std::string odd = pattern(100007);    // a 7-byte tail
  std::set<std::string> seen{file_fingerprint(write("base", bytes)), file_fingerprint(write("odd", odd))};
  std::size_t expected = 2;
  for (std::size_t at : {0u, 7u, 8u, 31u, 32u, 16384u, 50001u, 99999u}) {
    std::string changed = bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x01);
    seen.insert(file_fingerprint(write("changed", changed)));
    EXPECT_EQ(seen.size(), ++expected) << "flipping a bit of byte " << at << " kept the fingerprint";
  }
  for (std::size_t at : {100000u, 100003u, 100006u}) {  // in the tail
    std::string changed = odd;
    changed[at] = static_cast<char>(changed[at] ^ 0x80);
    seen.insert(file_fingerprint(write("changed", changed)));
    EXPECT_EQ(seen.size(), ++expected) << "flipping a bit of tail byte " << at << " kept the fingerprint";
  }
  // Swapped words, one more zero byte: different too.
  std::string swapped = bytes;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
  seen.insert(file_fingerprint(write("swapped", swapped)));
  seen.insert(file_fingerprint(write("longer", bytes + std::string(1, '\0'))));
  EXPECT_EQ(seen.size(), expected + 2);
}

TEST_F(FileFingerprint, OnlyTheFirstLimitBytesCountAndAnUnreadableFileHasNone) {
  const std::string bytes = pattern(70000);
  std::string changed_late = bytes;
  changed_late[69000] ^= 0x10;
  const std::string p1 = write("one", bytes), p2 = write("two", changed_late);
  EXPECT_EQ(file_fingerprint(p1, 65536), file_fingerprint(p2, 65536));
  EXPECT_EQ(file_fingerprint(p1, 65536), fmt::format("{:016x}", bytes_fingerprint(bytes.substr(0, 65536))));
  EXPECT_NE(file_fingerprint(p1), file_fingerprint(p2));
  EXPECT_EQ(file_fingerprint((dir_ / "missing").string()), "");
  EXPECT_EQ(file_fingerprint(dir_.string()), "") << "a directory is not a program";
}

}  // namespace
