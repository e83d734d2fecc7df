// Table-driven tests of Slurm hostlist expansion: valid lists expand as Slurm does,
// malformed lists return an error naming the offending text and its position.
#include <gtest/gtest.h>

#include "ddplaunch/cluster/hostlist.h"

using ddplaunch::cluster::expand_hostlist;
using Hosts = std::vector<std::string>;

struct GoodCase {
  const char* list;
  Hosts want;
};

TEST(ClusterHostlist, ExpandsLikeSlurm) {
  const GoodCase cases[] = {
      {"", {}},
      {"   ", {}},
      {"n1", {"n1"}},
      {"node-a.example.com", {"node-a.example.com"}},
      {"a,b,c", {"a", "b", "c"}},
      {"n[1-3]", {"n1", "n2", "n3"}},
      {"n[5]", {"n5"}},
      {"n[01-04,07]", {"n01", "n02", "n03", "n04", "n07"}},
      {"n[01-04,07],gpu-a[1-2]", {"n01", "n02", "n03", "n04", "n07", "gpu-a1", "gpu-a2"}},
      {"n[8-10]", {"n8", "n9", "n10"}},
      {"n[08-10]", {"n08", "n09", "n10"}},
      {"n[098-101]", {"n098", "n099", "n100", "n101"}},
      {"r[1-2]n[1-2]", {"r1n1", "r1n2", "r2n1", "r2n2"}},
      {"n[1-2]-ib", {"n1-ib", "n2-ib"}},
      {"[1-2]x", {"1x", "2x"}},
      {"a,,b,", {"a", "b"}},
      {" n[1-2] ", {"n1", "n2"}},
      {"n[3,1]", {"n3", "n1"}},
      {"n1,n1", {"n1", "n1"}},
      {"n[0-0]", {"n0"}},
  };
  for (const auto& c : cases) {
    auto r = expand_hostlist(c.list);
    ASSERT_TRUE(r.ok()) << "list \"" << c.list << "\": " << *r.error;
    EXPECT_EQ(r.hosts, c.want) << "list \"" << c.list << "\"";
  }
}

struct BadCase {
  const char* list;
  const char* must_mention;  // the offending text
  const char* position;      // "position N" (1-based)
};

TEST(ClusterHostlist, MalformedListsReturnErrors) {
  const BadCase cases[] = {
      {"n[1-2", "unbalanced \"[\"", "position 2"},
      {"n1-2]", "unbalanced \"]\"", "position 5"},
      {"a,n[1-[2]]", "unbalanced \"[\"", "position 4"},
      {"n[5-3]", "reversed range \"5-3\"", "position 3"},
      {"n[a-b]", "\"a-b\" is not a number", "position 3"},
      {"n[1-x]", "\"1-x\" is not a number", "position 3"},
      {"n[1-]", "\"1-\" is not a number", "position 3"},
      {"n[-3]", "\"-3\" is not a number", "position 3"},
      {"n[1-2-3]", "\"1-2-3\" is not a number", "position 3"},
      {"n[]", "empty brackets", "position 2"},
      {"x,n[1,,3]", "empty element", "position 7"},
      {"n[1,]", "empty element", "position 5"},
      {"n[1234567890123456789]", "is not a number", "position 3"},
      {"n[0-65536]", "past 65536 hosts", "position 1"},
      {"r[1-300]n[1-300]", "past 65536 hosts", "position 1"},
  };
  for (const auto& c : cases) {
    auto r = expand_hostlist(c.list);
    ASSERT_FALSE(r.ok()) << "list \"" << c.list << "\" should be refused";
    EXPECT_TRUE(r.hosts.empty());
    EXPECT_NE(r.error->find(c.must_mention), std::string::npos)
        << "list \"" << c.list << "\": " << *r.error;
    EXPECT_NE(r.error->find(c.position), std::string::npos)
        << "list \"" << c.list << "\": " << *r.error;
    EXPECT_NE(r.error->find(c.list), std::string::npos) << *r.error;  // names the whole list
  }
}

TEST(ClusterHostlist, CapCountsTheWholeList) {
  EXPECT_TRUE(expand_hostlist("n[1-65536]").ok());
  EXPECT_EQ(expand_hostlist("n[1-65536]").hosts.size(), 65536u);
  auto r = expand_hostlist("a[1-3],b[1-3]", 5);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->find("\"b[1-3]\""), std::string::npos) << *r.error;
  EXPECT_NE(r.error->find("position 8"), std::string::npos) << *r.error;
  EXPECT_TRUE(expand_hostlist("a[1-3],b[1-2]", 5).ok());
}
