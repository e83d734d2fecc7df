// preflight: CUDA_VISIBLE_DEVICES rules, --nproc-per-node resolution, GPU detection that must
// degrade cleanly on a machine without a driver, and when a probe is needed at all.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ddplaunch/preflight/gpus.h"
#include "ddplaunch/preflight/nproc_request.h"

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
  auto nproc = [](std::string_view text, int gpus, int cpus = 16) {
    auto request = parse_nproc_request(text);
    EXPECT_TRUE(request.has_value()) << text;
    return resolve_nproc(request.value_or(NprocRequest{}), gpus, cpus);
  };
  EXPECT_EQ(*nproc("auto", 8), 8);
  EXPECT_EQ(*nproc("auto", 0, 16), 16);  // torchrun's auto: GPUs, else CPUs
  EXPECT_EQ(*nproc("gpu-or-1", 8), 8);    // ddplaunch's default
  EXPECT_EQ(*nproc("gpu-or-1", 0, 16), 1);
  EXPECT_EQ(*resolve_nproc(NprocRequest{}, 0, 16), 1);  // the default is gpu-or-1
  EXPECT_EQ(*nproc("gpu", 4, 16), 4);
  EXPECT_FALSE(nproc("gpu", 0, 16).ok());
  EXPECT_EQ(*nproc("cpu", 4, 16), 16);  // explicit: one per CPU even beside GPUs
  EXPECT_EQ(*nproc("4", 8), 4);
  EXPECT_EQ(*nproc("8", 8), 8);
  EXPECT_EQ(*nproc("16", 0), 16);  // CPU-only node: any positive count
  auto over = nproc("8", 4);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error.find("--nproc-per-node 8"), std::string::npos) << over.error;
  EXPECT_NE(over.error.find("only 4 GPU(s)"), std::string::npos) << over.error;
  EXPECT_NE(over.error.find("--nproc-per-node 4 or auto"), std::string::npos) << over.error;
  for (const char* bad : {"0", "-2", "abc", "", "4x", "1.5", "99999999999"})
    EXPECT_FALSE(parse_nproc_request(bad).has_value()) << bad;
  EXPECT_NE(nproc_request_choices().find("auto"), std::string::npos);
  for (const char* text : {"7", "auto", "gpu", "cpu", "gpu-or-1"})
    EXPECT_EQ(nproc_request_text(*parse_nproc_request(text)), text);
}

TEST(PreflightGpus, DetectReturnsCleanlyWithASource) {
  GpuInfo info = detect_gpus();
  EXPECT_NE(info.source, GpuSource::NotProbed) << gpu_source_name(info.source);
  EXPECT_GE(info.count, 0);
  EXPECT_FALSE(info.note.empty());
  if (info.source == GpuSource::None) {
    EXPECT_EQ(info.count, 0);
  } else {
    EXPECT_FALSE(info.cuda_version.empty() && info.driver_version.empty());
  }
  // NCCL is optional; when found its version looks like "2.x.y".
  if (!info.nccl_version.empty()) {
    EXPECT_EQ(info.nccl_version.rfind("2.", 0), 0u) << info.nccl_version;
  }
  std::printf("detect_gpus: count=%d source=%s driver=%s cuda=%s nccl=%s note=%s\n", info.count,
              std::string(gpu_source_name(info.source)).c_str(), info.driver_version.c_str(), info.cuda_version.c_str(),
              info.nccl_version.c_str(), info.note.c_str());
}

// Nothing is probed that the job does not need.
TEST(PreflightGpus, ProbeOnlyWhenTheJobNeedsItAndADriverCouldAnswer) {
  struct Row { bool driver, number, single, placement, report, probe, nccl; };
  const Row rows[] = {
      // driver number single placement report → probe nccl
      {false, false, true, false, false, false, false},   // no device, no module: nothing to find
      {false, false, false, true, true, false, true},     // ...even for doctor; NCCL still reported
      {true, true, true, false, false, false, false},     // --nproc-per-node 8 on one node
      {true, false, true, false, false, true, false},     // gpu-or-1 / auto: the count decides nproc
      {true, true, false, false, false, true, true},      // multi-node: facts compared across nodes
      {true, true, true, true, false, true, false},       // --numa-binding needs PCI addresses
      {true, true, true, false, true, true, true},        // doctor / --dry-run report the facts
      {false, true, false, false, false, false, false},   // CPU-only multi-node (gloo): no NCCL lookup
  };
  for (const auto& r : rows) {
    GpuNeeds needs;
    needs.driver_present = r.driver;
    needs.nproc_is_number = r.number;
    needs.single_node = r.single;
    needs.placement = r.placement;
    needs.report = r.report;
    EXPECT_EQ(gpu_probe_needed(needs), r.probe)
        << r.driver << r.number << r.single << r.placement << r.report;
    EXPECT_EQ(nccl_version_needed(needs), r.nccl) << r.driver << r.number << r.single << r.placement << r.report;
  }
}

TEST(PreflightGpus, DriverPresenceFromDeviceNamesAndModules) {
  for (const char* yes : {"nvidia0", "nvidia7", "nvidiactl", "nvidia-uvm", "dxg"}) EXPECT_TRUE(is_gpu_device_name(yes)) << yes;
  for (const char* no : {"null", "nvme0", "nvme0n1", "nvidia-caps", "dri", "tty0"}) EXPECT_FALSE(is_gpu_device_name(no)) << no;
  EXPECT_TRUE(lists_nvidia_module("ext4 1 0 - Live 0x0\nnvidia 56000000 100 nvidia_uvm, Live 0x0\n"));
  EXPECT_TRUE(lists_nvidia_module("nvgpu 100 0 - Live 0x0"));
  EXPECT_FALSE(lists_nvidia_module("ext4 1 0 - Live 0x0\nnvme 1 0 - Live\nnouveau 1 0 - Live\n"));
  EXPECT_FALSE(lists_nvidia_module("i2c_nvidia_gpu 16384 0 - Live 0x0\n"));  // not the driver itself
  EXPECT_FALSE(lists_nvidia_module(""));
}

TEST(PreflightGpus, NcclVersionFromTheLibraryName) {
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2.18.5"), "2.18.5");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2.28.9"), "2.28.9");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2"), "");       // CUDA's bundle: no full version
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so"), "");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2.18"), "");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2.18.5.bak"), "");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2.18.x"), "");
  EXPECT_EQ(nccl_version_from_file_name("libnccl-net.so.2.18.5"), "");
  EXPECT_EQ(nccl_version_from_file_name("libnccl.so.2..5"), "");
}

TEST(PreflightGpus, NcclVersionFromItsHeader) {
  EXPECT_EQ(nccl_version_from_header("#ifndef NCCL_H_\n#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n"
                                     "#define NCCL_PATCH 9\n#define NCCL_SUFFIX \"\"\n#define NCCL_VERSION_CODE 22809\n"),
            "2.28.9");
  EXPECT_EQ(nccl_version_from_header("#define NCCL_MAJOR_X 9\n#define NCCL_MAJOR\t2\n#define NCCL_MINOR 18\n"
                                     "#define NCCL_PATCH 5\n"),
            "2.18.5");
  EXPECT_EQ(nccl_version_from_header("#define NCCL_MAJOR 2\n#define NCCL_MINOR 18\n"), "");  // no patch
  EXPECT_EQ(nccl_version_from_header(""), "");
}

TEST(PreflightGpus, LocatesALibraryThroughLdLibraryPathThenTheLinkerCache) {
  char dir_template[] = "/tmp/ddplaunch-gpus-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string lib = dir + "/libnccl.so.2";
  std::fclose(std::fopen(lib.c_str(), "w"));
  // LD_LIBRARY_PATH first (empty entries and missing directories skipped).
  EXPECT_EQ(locate_library("libnccl.so.2", "::/nonexistent:" + dir, ""), lib);
  // The cache's string table: NUL-separated names and paths; only an existing file counts.
  std::string cache = std::string("glibc-ld.so.cache1.1\0\0\0\0", 24) + "libnccl.so.2" + '\0' +
                      "/gone/lib/libnccl.so.2" + '\0' + "libnccl.so.2" + '\0' + lib + '\0' + "/x/libnccl.so.22" + '\0';
  EXPECT_EQ(locate_library("libnccl.so.2", "", cache), lib);
  EXPECT_EQ(locate_library("libnccl.so.2", "", std::string("libnccl.so.2\0/gone/libnccl.so.2\0", 32)), "");
  std::remove(lib.c_str());
  rmdir(dir.c_str());
  // The real cache of this machine has libc.
  std::string real_cache;
  if (FILE* f = std::fopen("/etc/ld.so.cache", "rb")) {
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) real_cache.append(buffer, n);
    std::fclose(f);
  }
  if (real_cache.empty()) GTEST_SKIP() << "no /etc/ld.so.cache on this machine";
  EXPECT_NE(locate_library("libc.so.6", "", real_cache), "");
}

TEST(PreflightGpus, NotProbedWhenTheJobDoesNotNeedIt) {
  GpuQuery query;
  query.devices = false;
  query.nccl = NcclLookup::Skip;
  GpuInfo info = detect_gpus(query);
  EXPECT_EQ(info.source, GpuSource::NotProbed);
  EXPECT_EQ(gpu_source_name(info.source), "not probed");
  EXPECT_EQ(info.count, 0);
  EXPECT_EQ(info.nccl_version, "");
  EXPECT_NE(info.note.find("not probed"), std::string::npos) << info.note;
}
