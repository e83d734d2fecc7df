// CPU/NUMA placement (--numa-binding): kernel CPU lists, the sysfs reader on fake trees
// (two sockets, four NUMA nodes, hyperthreads, two L3 complexes per node, GPUs on
// different nodes), and every mode's rule, with and without GPUs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ddplaunch/preflight/gpus.h"
#include "placement/cpu_list.h"
#include "placement/cpu_placement.h"
#include "placement/cpu_topology.h"
#include "placement/node_placement.h"

using namespace ddplaunch;
using namespace ddplaunch::placement;
namespace fs = std::filesystem;

namespace {

CpuList cpus(const char* text) { return *parse_cpu_list(text); }

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

// A fake /sys: 16 CPUs, sockets 0 (CPUs 0-7) and 1 (8-15), NUMA nodes of 4 CPUs each
// (node N: CPUs 4N..4N+3), hyperthread pairs (2k, 2k+1), an L3 per core pair... per pair of
// CPUs, so each node has two complexes. GPUs: 0 and 1 on node 0, 2 on node 3, 3 on node 2.
struct FakeSysfs {
  fs::path root;
  std::vector<std::string> gpus{"0000:1a:00.0", "0000:1b:00.0", "0000:9a:00.0", "0000:9b:00.0"};

  explicit FakeSysfs(bool numa = true, int cpu_count = 16) {
    root = fs::temp_directory_path() / ("ddpl-sysfs-" + std::to_string(getpid()) + "-" + std::to_string(counter()++));
    fs::remove_all(root);
    write_file(root / "devices/system/cpu/online", fmt_range(0, cpu_count - 1));
    for (int c = 0; c < cpu_count; ++c) {
      fs::path dir = root / ("devices/system/cpu/cpu" + std::to_string(c));
      write_file(dir / "topology/physical_package_id", std::to_string(c / 8));
      write_file(dir / "topology/thread_siblings_list", fmt_range(c & ~1, c | 1));
      write_file(dir / "cache/index0/type", "Data");
      write_file(dir / "cache/index0/level", "1");
      write_file(dir / "cache/index0/shared_cpu_list", fmt_range(c & ~1, c | 1));
      write_file(dir / "cache/index1/type", "Instruction");
      write_file(dir / "cache/index1/level", "4");  // never a complex: not data
      write_file(dir / "cache/index1/shared_cpu_list", fmt_range(0, cpu_count - 1));
      write_file(dir / "cache/index3/type", "Unified");
      write_file(dir / "cache/index3/level", "3");
      write_file(dir / "cache/index3/shared_cpu_list", fmt_range(c & ~1, c | 1));
    }
    if (numa)
      for (int n = 0; n < cpu_count / 4; ++n)
        write_file(root / ("devices/system/node/node" + std::to_string(n)) / "cpulist", fmt_range(4 * n, 4 * n + 3));
    const int gpu_nodes[] = {0, 0, 3, 2};
    for (std::size_t g = 0; g < gpus.size(); ++g)
      write_file(root / "bus/pci/devices" / gpus[g] / "numa_node", numa ? std::to_string(gpu_nodes[g]) : "-1");
  }
  ~FakeSysfs() { fs::remove_all(root); }

  Topology topology(int gpu_count = 4) const {
    auto t = read_topology(root.string(), {gpus.begin(), gpus.begin() + gpu_count});
    EXPECT_TRUE(t.ok()) << t.error;
    return *t;
  }
  static std::string fmt_range(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::vector<std::string> cpu_texts(const std::vector<WorkerPlacement>& plan) {
  std::vector<std::string> out;
  for (const auto& p : plan) out.push_back(format_cpu_list(p.cpus));
  return out;
}

using Texts = std::vector<std::string>;

// The CPU lists of a plan that must succeed ({"(refused) ..."} when it does not).
Texts planned(const Topology& t, BindingMode mode, const char* allowed, int workers) {
  auto plan = plan_placement(t, mode, cpus(allowed), workers);
  return plan.ok() ? cpu_texts(*plan) : Texts{"(refused) " + plan.error};
}

// The error of a plan that must be refused ("" when it was not).
std::string refusal(const Topology& t, BindingMode mode, const char* allowed, int workers) {
  auto plan = plan_placement(t, mode, cpus(allowed), workers);
  return plan.ok() ? "" : plan.error;
}

}  // namespace

TEST(PlacementCpuList, ParsesAndPrintsTheKernelForm) {
  EXPECT_EQ(cpus("0-3,8,10-11\n"), (CpuList{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(cpus(""), CpuList{});
  EXPECT_EQ(cpus("5,1-2,2"), (CpuList{1, 2, 5}));
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_FALSE(parse_cpu_list("1,,2"));
  EXPECT_FALSE(parse_cpu_list("0-99999999"));  // bounded
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(intersect(cpus("0-7"), cpus("4-11")), cpus("4-7"));
  EXPECT_EQ(unite(cpus("0-1"), cpus("4")), cpus("0-1,4"));
}

TEST(PlacementCpuList, CudaBusIdsBecomeSysfsNames) {
  EXPECT_EQ(preflight::sysfs_pci_address("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(preflight::sysfs_pci_address("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(preflight::sysfs_pci_address("10000:01:00.0"), "10000:01:00.0");  // VMD domains keep their digits
}

TEST(PlacementTopology, ReadsNodesSocketsCoresComplexesAndGpus) {
  FakeSysfs sys;
  Topology t = sys.topology();
  ASSERT_EQ(t.cpus.size(), 16u);
  EXPECT_EQ(t.numa_nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.cpus_of_node(2), cpus("8-11"));
  EXPECT_EQ(t.find(9)->package, 1);
  EXPECT_EQ(t.find(9)->core, 8);
  EXPECT_EQ(t.find(9)->cache_group, 8);  // the level-3 data cache, not the level-4 instruction one
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[2].numa_node, 3);
  EXPECT_EQ(t.gpus[2].bus_id, "0000:9a:00.0");
}

TEST(PlacementTopology, OneNodeMachineAndMissingFiles) {
  FakeSysfs sys(/*numa=*/false, 4);
  Topology t = sys.topology(1);
  EXPECT_EQ(t.numa_nodes, (std::vector<int>{0}));
  EXPECT_EQ(t.gpus[0].numa_node, 0);  // sysfs says -1: one node, as torch reads it
  auto missing = read_topology(sys.root.string(), {"0000:ff:00.0"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error.find("0000:ff:00.0"), std::string::npos) << missing.error;
  auto no_sysfs = read_topology("/nonexistent-sysfs", {});
  ASSERT_FALSE(no_sysfs.ok());
  EXPECT_NE(no_sysfs.error.find("online CPUs"), std::string::npos) << no_sysfs.error;
}

TEST(PlacementModes, NodeBindsEachWorkerToItsGpusNode) {
  FakeSysfs sys;
  auto plan = plan_placement(sys.topology(), BindingMode::Node, cpus("0-15"), 4);
  ASSERT_TRUE(plan.ok()) << plan.error;
  EXPECT_EQ(cpu_texts(*plan), (Texts{"0-3", "0-3", "12-15", "8-11"}));
  EXPECT_EQ((*plan)[2].memory_nodes, (std::vector<int>{3}));
  EXPECT_NE((*plan)[2].why.find("GPU 2 (0000:9a:00.0) is on NUMA node 3"), std::string::npos) << (*plan)[2].why;
  EXPECT_NE(describe_placement((*plan)[2]).find("cpus 12-15, memory preferred on NUMA node(s) 3"), std::string::npos);
}

TEST(PlacementModes, SocketBindsToEveryNodeOfTheGpusSocket) {
  FakeSysfs sys;
  auto plan = plan_placement(sys.topology(), BindingMode::Socket, cpus("0-15"), 4);
  ASSERT_TRUE(plan.ok()) << plan.error;
  EXPECT_EQ(cpu_texts(*plan), (Texts{"0-7", "0-7", "8-15", "8-15"}));
  EXPECT_EQ((*plan)[3].memory_nodes, (std::vector<int>{2, 3}));
}

TEST(PlacementModes, ExclusiveSplitsANodesCoresAmongItsGpus) {
  FakeSysfs sys;
  // Node 0's two cores go one to GPU 0, one to GPU 1; a GPU alone on its node gets all of it.
  EXPECT_EQ(planned(sys.topology(), BindingMode::Exclusive, "0-15", 4), (Texts{"0-1", "2-3", "12-15", "8-11"}));
  // With only one allowed core on node 0, two GPUs cannot each have one.
  EXPECT_NE(refusal(sys.topology(), BindingMode::Exclusive, "0-1,8-15", 4)
                .find("NUMA node 0 has 1 allowed physical core(s) for its 2 GPUs"),
            std::string::npos);
}

TEST(PlacementModes, CoreComplexGivesEachGpuOfANodeAnotherL3) {
  FakeSysfs sys;
  EXPECT_EQ(planned(sys.topology(), BindingMode::CoreComplex, "0-15", 4), (Texts{"0-1", "2-3", "12-13", "8-9"}));
  // A complex with more allowed CPUs comes first.
  EXPECT_EQ(planned(sys.topology(), BindingMode::CoreComplex, "0,2-3,8-15", 1), (Texts{"2-3"}));
}

TEST(PlacementModes, AllowedCpusNarrowAndTheirAbsenceIsExplained) {
  FakeSysfs sys;
  EXPECT_EQ(planned(sys.topology(), BindingMode::Node, "1-2,12-15", 3), (Texts{"1-2", "1-2", "12-15"}));
  const std::string none = refusal(sys.topology(), BindingMode::Node, "4-15", 1);
  EXPECT_NE(none.find("local rank 0: GPU 0 (0000:1a:00.0) is on NUMA node 0"), std::string::npos) << none;
  EXPECT_NE(none.find("allowed: 4-15"), std::string::npos) << none;
}

TEST(PlacementModes, MoreWorkersThanGpusIsRefused) {
  FakeSysfs sys;
  EXPECT_NE(refusal(sys.topology(2), BindingMode::Node, "0-15", 3).find("3 workers on 2 GPU(s)"), std::string::npos);
}

TEST(PlacementModes, WithoutGpusEachWorkerGetsAnEvenSliceOfCores) {
  FakeSysfs sys;
  Topology t = sys.topology(0);
  for (auto mode : {BindingMode::Node, BindingMode::Socket, BindingMode::Exclusive, BindingMode::CoreComplex}) {
    auto two = plan_placement(t, mode, cpus("0-15"), 2);
    ASSERT_TRUE(two.ok()) << two.error;
    EXPECT_EQ(cpu_texts(*two), (Texts{"0-7", "8-15"}));
    EXPECT_EQ((*two)[1].memory_nodes, (std::vector<int>{2, 3}));
  }
  EXPECT_EQ(planned(t, BindingMode::Node, "0-15", 3), (Texts{"0-5", "6-11", "12-15"}));  // 8 cores: 3, 3, 2
  EXPECT_EQ(planned(t, BindingMode::Node, "0-3", 3), (Texts{"0-1", "2-3", "0-1"}));  // 2 cores: shared in turn
  EXPECT_NE(plan_placement(t, BindingMode::Node, cpus("0-3"), 3)->front().why.find("3 workers share 2 core(s)"),
            std::string::npos);
}

TEST(PlacementModes, OneNodeMachineLeavesTheMemoryPolicyAlone) {
  FakeSysfs sys(/*numa=*/false, 4);
  auto plan = plan_placement(sys.topology(0), BindingMode::Node, cpus("0-3"), 2);
  ASSERT_TRUE(plan.ok()) << plan.error;
  EXPECT_EQ(cpu_texts(*plan), (Texts{"0-1", "2-3"}));
  EXPECT_TRUE((*plan)[0].memory_nodes.empty());
  EXPECT_NE(describe_placement((*plan)[0]).find("memory policy unchanged"), std::string::npos);
}

TEST(PlacementModes, NamesAndNodeGlue) {
  EXPECT_EQ(binding_mode_from_name("core_complex"), BindingMode::CoreComplex);
  EXPECT_EQ(binding_mode_name(BindingMode::CoreComplex), "core-complex");
  EXPECT_FALSE(binding_mode_from_name("numa"));
  EXPECT_TRUE(plan_node_placement(BindingMode::None, 4, 0, {})->empty());
  auto unknown_gpus = plan_node_placement(BindingMode::Node, 2, 2, {});
  ASSERT_FALSE(unknown_gpus.ok());
  EXPECT_NE(unknown_gpus.error.find("PCI addresses are unknown"), std::string::npos) << unknown_gpus.error;
  FakeSysfs sys;
  auto plan = plan_node_placement(BindingMode::Node, 2, 2, {sys.gpus[2], sys.gpus[3]}, sys.root.string());
  // The launcher's own allowed CPUs apply: on this machine, whatever they are, each worker's
  // CPUs are among them and on its GPU's node.
  if (plan.ok()) {
    for (int cpu : (*plan)[0].cpus) EXPECT_GE(cpu, 12);
  } else {
    EXPECT_NE(plan.error.find("none of that node's CPUs"), std::string::npos) << plan.error;
  }
}
