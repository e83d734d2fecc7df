// preflight: CUDA_VISIBLE_DEVICES rules, --nproc-per-node resolution, and GPU detection
// that must degrade cleanly on a machine without a driver.
#include <gtest/gtest.h>

#include "ddplaunch/preflight/gpus.h"

using namespace ddplaunch::preflight;

TEST(PreflightGpus, CudaVisibleDevicesTable) {
  struct Row { std::optional<std::string_view> cvd; int physical; int expected; };
  const Row rows[] = {
      {std::nullopt, 8, 8},   // unset: all
      {"", 8, 0},             // empty: none
      {"-1", 8, 0},
      {"NoDevFiles", 8, 0},
      {"0,1,2,3", 8, 4},
      {"3,1", 8, 2},
      {"0,1,2,3", 2, 2},      // list cut at the first ordinal >= device count
      {"1,5,0", 4, 1},        // 5 does not exist: only "1" survives
      {"0,1,-1,2", 8, 2},     // negative ends the list
      {"0,x,2", 8, 1},        // invalid entry ends the list
      {"1gpu2,2ampere", 8, 2},// strtoul-like: leading digits count
      {" 0 , 1 ", 8, 2},      // spaces trimmed
      {"0,0", 8, 0},          // repeated ordinal: CUDA exposes nothing
      {"2,3", 0, 0},          // no devices at all
      {"GPU-aaaa,GPU-bbbb", 8, 2},
      {"GPU-aaaa,GPU-bbbb,GPU-cccc", 2, 2},
      {"GPU-aaaa,GPU-aaaa", 8, 0},
      {"MIG-xxxx", 8, 1},
      {"GPU-aaaa,1", 8, 1},   // a non-UUID entry ends a UUID list
  };
  for (const auto& r : rows) {
    EXPECT_EQ(visible_gpu_count(r.cvd, r.physical), r.expected)
        << "CUDA_VISIBLE_DEVICES=" << (r.cvd ? std::string(*r.cvd) : "<unset>") << " physical=" << r.physical;
  }
}

TEST(PreflightGpus, ResolveNproc) {
  EXPECT_EQ(*resolve_nproc("auto", 8), 8);
  EXPECT_EQ(*resolve_nproc("auto", 0, 16), 16);  // torchrun's auto: GPUs, else CPUs
  EXPECT_EQ(*resolve_nproc("gpu-or-1", 8), 8);    // ddplaunch's default
  EXPECT_EQ(*resolve_nproc("gpu-or-1", 0, 16), 1);
  EXPECT_EQ(*resolve_nproc("gpu", 4, 16), 4);
  EXPECT_FALSE(resolve_nproc("gpu", 0, 16).ok());
  EXPECT_EQ(*resolve_nproc("cpu", 4, 16), 16);  // explicit: one per CPU even beside GPUs
  EXPECT_EQ(*resolve_nproc("4", 8), 4);
  EXPECT_EQ(*resolve_nproc("8", 8), 8);
  EXPECT_EQ(*resolve_nproc("16", 0), 16);  // CPU-only node: any positive count
  auto over = resolve_nproc("8", 4);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error.find("--nproc-per-node 8"), std::string::npos) << over.error;
  EXPECT_NE(over.error.find("only 4 GPU(s)"), std::string::npos) << over.error;
  EXPECT_NE(over.error.find("--nproc-per-node 4 or auto"), std::string::npos) << over.error;
  for (const char* bad : {"0", "-2", "abc", "", "4x", "1.5", "99999999999"}) {
    auto r = resolve_nproc(bad, 8);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error.find("auto"), std::string::npos) << bad;
  }
}

TEST(PreflightGpus, DetectReturnsCleanlyWithASource) {
  GpuInfo info = detect_gpus();
  EXPECT_TRUE(info.source == "libcuda" || info.source == "nvml" || info.source == "none") << info.source;
  EXPECT_GE(info.count, 0);
  EXPECT_FALSE(info.note.empty());
  if (info.source == "none") {
    EXPECT_EQ(info.count, 0);
  } else {
    EXPECT_FALSE(info.cuda_version.empty() && info.driver_version.empty());
  }
  // NCCL is optional; when found its version looks like "2.x.y".
  if (!info.nccl_version.empty()) {
    EXPECT_EQ(info.nccl_version.rfind("2.", 0), 0u) << info.nccl_version;
  }
  std::printf("detect_gpus: count=%d source=%s driver=%s cuda=%s nccl=%s note=%s\n", info.count,
              info.source.c_str(), info.driver_version.c_str(), info.cuda_version.c_str(),
              info.nccl_version.c_str(), info.note.c_str());
}
