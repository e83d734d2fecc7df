// summarize_error_file: torch's @record JSON (a real file written by a real decorated script),
// the plain-string "message" format, and garbage, missing, empty, huge and cut-off files.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "env/error_file.h"

using namespace ddplaunch;
namespace fs = std::filesystem;

namespace {

class ErrorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ddpl-errfile-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  fs::path dir_;
};

TEST(ErrorFilePath, OneFilePerRankAndGeneration) {
  EXPECT_EQ(error_file_path("/tmp/d", 7, Generation{2}), "/tmp/d/error-rank7-gen2.json");
  EXPECT_NE(error_file_path("/tmp/d", 7, Generation{2}), error_file_path("/tmp/d", 7, Generation{3}));
}

TEST_F(ErrorFileTest, RealRecordDecoratedScriptThatRaises) {
  const std::string script = write("train.py",
                                   "from torch.distributed.elastic.multiprocessing.errors import record\n"
                                   "def load(lr):\n"
                                   "    raise ValueError(f'learning rate must be positive, got {lr}')\n"
                                   "def setup():\n"
                                   "    load(-1)\n"
                                   "@record\n"
                                   "def main():\n"
                                   "    setup()\n"
                                   "if __name__ == '__main__':\n"
                                   "    main()\n");
  const std::string error_file = error_file_path(dir_.string(), 3, Generation{1});
  const std::string command = "TORCHELASTIC_ERROR_FILE='" + error_file + "' /usr/bin/python3 '" + script +
                              "' >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  if (!fs::exists(error_file)) {
    // Only acceptable when this Python has no torch at all.
    ASSERT_NE(std::system("/usr/bin/python3 -c 'import torch.distributed.elastic' >/dev/null 2>&1"), 0)
        << "the @record script wrote no error file (status " << status << ")";
    GTEST_SKIP() << "/usr/bin/python3 has no torch.distributed.elastic";
  }
  auto summary = summarize_error_file(error_file);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->rfind("ValueError: learning rate must be positive, got -1\n", 0), 0u) << *summary;
  EXPECT_NE(summary->find("line 3, in load"), std::string::npos) << *summary;
  EXPECT_NE(summary->find("raise ValueError(f'learning rate"), std::string::npos) << *summary;
  EXPECT_NE(summary->find("in setup"), std::string::npos) << *summary;
  EXPECT_NE(summary->find("in main"), std::string::npos) << *summary;
  EXPECT_LT(summary->size(), 2000u);
}

TEST_F(ErrorFileTest, KeepsTheLastFramesOnly) {
  std::string stack = "Traceback (most recent call last):\\n";
  for (int i = 0; i < 50; ++i)
    stack += "  File \\\"/x/deep.py\\\", line " + std::to_string(i) + ", in f" + std::to_string(i) +
             "\\n    f" + std::to_string(i + 1) + "()\\n";
  stack += "RecursionError: too deep\\n";
  auto summary = summarize_error_file(write(
      "deep.json", "{\"message\": {\"message\": \"RecursionError: too deep\", \"extraInfo\": {\"py_callstack\": \"" +
                       stack + "\", \"timestamp\": \"1700000000\"}}}"));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->rfind("RecursionError: too deep\n", 0), 0u) << *summary;
  EXPECT_EQ(summary->find("line 45,"), std::string::npos) << *summary;
  for (int i = 46; i < 50; ++i)
    EXPECT_NE(summary->find("line " + std::to_string(i) + ", in f" + std::to_string(i)), std::string::npos) << *summary;
}

TEST_F(ErrorFileTest, PlainStringMessageAndEscapes) {
  auto summary = summarize_error_file(write("plain.json", R"({"message": "RuntimeError: NCCL \"timeout\"\u00e9 on\nrank 2", "errorCode": 1})"));
  ASSERT_TRUE(summary);
  EXPECT_EQ(*summary, "RuntimeError: NCCL \"timeout\"\xc3\xa9 on rank 2");
}

TEST_F(ErrorFileTest, MissingEmptyAndGarbageFilesGiveNothing) {
  EXPECT_FALSE(summarize_error_file((dir_ / "nope.json").string()));
  EXPECT_FALSE(summarize_error_file(write("empty.json", "")));
  EXPECT_FALSE(summarize_error_file(write("garbage.json", "\x01\x02not json at all {{{")));
  EXPECT_FALSE(summarize_error_file(write("array.json", "[1, 2, 3]")));
  EXPECT_FALSE(summarize_error_file(write("nomessage.json", R"({"other": "x"})")));
  EXPECT_FALSE(summarize_error_file(write("number.json", R"({"message": 42})")));
  EXPECT_FALSE(summarize_error_file(write("open.json", R"({"message": {"message": "x")")));
  EXPECT_FALSE(summarize_error_file(std::string(20000, '[') + "x"));  // a path, not a file
  EXPECT_FALSE(summarize_error_file(write("deep.json", std::string(100000, '[') + std::string(100000, ']'))));
  EXPECT_FALSE(summarize_error_file(dir_.string()));  // a directory
}

TEST_F(ErrorFileTest, HugeFileIsReadOnlyUpToTheBoundAndStillSummarized) {
  std::string huge = "{\"message\": {\"message\": \"MemoryError: " + std::string(10 * 1024 * 1024, 'x') +
                     "\", \"extraInfo\": {\"py_callstack\": \"\", \"timestamp\": \"1\"}}}";
  auto summary = summarize_error_file(write("huge.json", huge));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->rfind("MemoryError: xxx", 0), 0u);
  EXPECT_LT(summary->size(), 600u) << "the message is cut for the report";
}

}  // namespace
