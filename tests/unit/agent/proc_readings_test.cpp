// The kernel's texts a node reads to explain a slow rank, parsed from fixed texts: /proc/stat's
// CPU line, /proc/pressure, cgroup v1 and v2 cpu.stat, /proc/PID/stat, and where a process's
// CPU cgroup lies; a malformed text gives no figure.
#include <gtest/gtest.h>

#include "agent/proc_readings.h"

namespace ddplaunch {
namespace {

TEST(ProcReadings, TheCpuLineOfProcStatGivesTheTotalAndTheSteal) {
  auto t = parse_cpu_times("cpu  100 5 50 800 10 1 2 32 7 0\ncpu0 50 2 25 400 5 0 1 16 3 0\nintr 1 2 3\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->total, 1000u);  // guest time is inside user already
  EXPECT_EQ(t->steal, 32u);
  EXPECT_FALSE(parse_cpu_times("cpu0 50 2 25 400 5 0 1 16\n"));    // no aggregate line
  EXPECT_FALSE(parse_cpu_times("cpu  100 5 50 800\n"));             // an old kernel's short line
  EXPECT_FALSE(parse_cpu_times("cpu  100 5 x 800 10 1 2 32\n"));    // not a number
  EXPECT_FALSE(parse_cpu_times(""));
}

TEST(ProcReadings, PressureIsSomeAvg10AsAShare) {
  EXPECT_DOUBLE_EQ(*parse_pressure_some_avg10("some avg10=81.25 avg60=40.00 avg300=9.00 total=123\n"
                                              "full avg10=3.00 avg60=1.00 avg300=0.00 total=4\n"),
                   0.8125);
  EXPECT_DOUBLE_EQ(*parse_pressure_some_avg10("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), 0.0);
  EXPECT_FALSE(parse_pressure_some_avg10(""));  // no /proc/pressure: nothing said
  EXPECT_FALSE(parse_pressure_some_avg10("full avg10=3.00 avg60=1.00 avg300=0.00 total=4\n"));
  EXPECT_FALSE(parse_pressure_some_avg10("some avg10=abc avg60=1.00\n"));
  EXPECT_FALSE(parse_pressure_some_avg10("some avg10=140.00\n"));
}

TEST(ProcReadings, CpuStatOfCgroupV1AndV2GiveTheThrottledPeriods) {
  auto v1 = parse_cpu_stat("nr_periods 2000\nnr_throttled 1840\nthrottled_time 95000000000\n");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->periods, 2000u);
  EXPECT_EQ(v1->throttled, 1840u);
  auto v2 = parse_cpu_stat("usage_usec 900\nuser_usec 600\nsystem_usec 300\nnr_periods 50\nnr_throttled 5\n"
                           "throttled_usec 7000\nnr_bursts 0\nburst_usec 0\n");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->periods, 50u);
  EXPECT_EQ(v2->throttled, 5u);
  EXPECT_FALSE(parse_cpu_stat("usage_usec 900\nuser_usec 600\nsystem_usec 300\n"));  // v2 without the cpu controller
  EXPECT_FALSE(parse_cpu_stat("nr_periods 10\nnr_throttled 11\n"));  // more throttled than periods
  EXPECT_FALSE(parse_cpu_stat("nr_periods ten\nnr_throttled 1\n"));
}

TEST(ProcReadings, AProcessStatGivesUserPlusSystemTicksWhateverItsName) {
  EXPECT_EQ(*parse_process_cpu_ticks("4242 (python3) R 1 4242 1 0 -1 4194304 99 0 0 0 700 45 0 0 20 0 3 0 24361 3133440 "
                                     "376 18446744073709551615\n"),
            745u);
  // A command name with blanks and ')' in it.
  EXPECT_EQ(*parse_process_cpu_ticks("7 (a) b (c)) S 1 7 1 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 0 0\n"), 30u);
  EXPECT_FALSE(parse_process_cpu_ticks(""));
  EXPECT_FALSE(parse_process_cpu_ticks("7 (a) S 1 7"));
  EXPECT_FALSE(parse_process_cpu_ticks("7 (a) S 1 7 1 0 -1 0 0 0 0 0 x 20 0"));
}

const char* kMountinfo =
    "22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
    "34 30 0:31 /kubepods /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "41 30 0:38 /my\\040job /mnt/cg2 rw - cgroup2 cgroup2 rw,nsdelegate\n"
    "garbage line\n";

TEST(ProcReadings, TheCgroupMountsAreReadFromMountinfo) {
  const auto mounts = parse_cgroup_mounts(kMountinfo);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[0].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(mounts[0].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_FALSE(mounts[0].unified);
  EXPECT_EQ(mounts[1].root, "/kubepods");
  EXPECT_TRUE(mounts[2].unified);
  EXPECT_EQ(mounts[3].root, "/my job");  // \040 is a blank
}

TEST(ProcReadings, AWorkersCpuCgroupIsTheV1CpuHierarchyWhereMountedElseV2) {
  const auto mounts = parse_cgroup_mounts(kMountinfo);
  auto v1 = cpu_cgroup_of("12:memory:/kubepods/pod1\n4:cpu,cpuacct:/ddpl-straggler-77\n0::/user.slice\n", mounts);
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->name, "/ddpl-straggler-77");
  EXPECT_EQ(v1->directory, "/sys/fs/cgroup/cpu,cpuacct/ddpl-straggler-77");
  auto v2 = cpu_cgroup_of("0::/user.slice/job:7\n", mounts);  // a ':' in the path
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->directory, "/sys/fs/cgroup/unified/user.slice/job:7");
  auto root = cpu_cgroup_of("1:cpu:/\n", mounts);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->directory, "/sys/fs/cgroup/cpu,cpuacct");
}

TEST(ProcReadings, ACgroupOutsideEveryMountIsNotVisible) {
  // The launcher in another mount namespace (ip netns exec remounts /sys): no cgroup mounts.
  EXPECT_FALSE(cpu_cgroup_of("4:cpu,cpuacct:/batch\n0::/batch\n", {}));
  // A mount that shows only a subtree the process is not in.
  const auto subtree = parse_cgroup_mounts("41 30 0:38 /job7 /mnt/cg rw - cgroup2 cgroup2 rw\n");
  EXPECT_FALSE(cpu_cgroup_of("0::/job70/x\n", subtree));
  auto inside = cpu_cgroup_of("0::/job7/rank1\n", subtree);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->directory, "/mnt/cg/rank1");
  EXPECT_FALSE(cpu_cgroup_of("not a cgroup file", parse_cgroup_mounts(kMountinfo)));
}

}  // namespace
}  // namespace ddplaunch
