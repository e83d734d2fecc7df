// Where the shims are found (launcher/shim_paths): next to the executable in an installed or
// carried prefix, else the build tree's compiled-in paths.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "shim_paths.h"

// Shim lookup: a prefix laid out like an install (bin/, lib/ddplaunch/, share/ddplaunch/)
// wins over the build tree's compiled-in paths; a bare folder falls back to them.
TEST(ShimPaths, AnInstalledOrCarriedPrefixIsFoundRelativeToTheExecutable) {
  namespace fs = std::filesystem;
  char pattern[] = "/tmp/shim_paths_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path prefix = pattern;
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "lib" / "ddplaunch");
  fs::create_directories(prefix / "share" / "ddplaunch" / "python" / "autoload");
  std::ofstream(prefix / "lib" / "ddplaunch" / "libddplaunch_nccl_preload.so") << "x";
  std::ofstream(prefix / "share" / "ddplaunch" / "python" / "autoload" / "sitecustomize.py") << "";

  auto found = ddplaunch::locate_shims_from((prefix / "bin").string());
  EXPECT_EQ(found.preload_lib, (prefix / "lib" / "ddplaunch" / "libddplaunch_nccl_preload.so").string());
  EXPECT_EQ(found.python_autoload_dir, (prefix / "share" / "ddplaunch" / "python" / "autoload").string());

  fs::remove(prefix / "lib" / "ddplaunch" / "libddplaunch_nccl_preload.so");
  fs::remove(prefix / "share" / "ddplaunch" / "python" / "autoload" / "sitecustomize.py");
  auto fallback = ddplaunch::locate_shims_from((prefix / "bin").string());
  EXPECT_EQ(fallback.preload_lib, std::string(DDPLAUNCH_PRELOAD_LIB));
  EXPECT_EQ(fallback.python_autoload_dir, std::string(DDPLAUNCH_PYTHON_SHIM_DIR));
  fs::remove_all(prefix);
}
