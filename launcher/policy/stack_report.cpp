// Grouping, summarising and normalising stacks (see stack_report.h).
#include "policy/stack_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace ddplaunch {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trimmed(std::string_view s) {
  auto start = s.find_first_not_of(" \t");
  if (start == std::string_view::npos) return "";
  auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(start, end - start + 1));
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A frame of the program, not of Python's or a library's own files.
bool is_library_path(const std::string& path) {
  for (const char* mark : {"site-packages/", "dist-packages/", "/lib/python", "<frozen", "/usr/include/", "../sysdeps/",
                           "/usr/lib/", "ddplaunch_shim", "ddplaunch_wait"})
    if (path.find(mark) != std::string::npos) return true;
  return false;
}

struct Frame {
  std::string function;
  std::string file;  // "" when unknown
  std::string line;
};

// Frames of the first thread of a normalised stack (the thread that runs the program's
// main code when the text names one: its outermost frame is "<module>" or "main").
std::vector<Frame> main_thread_frames(const std::string& text) {
  std::vector<std::vector<Frame>> threads(1);
  for (const std::string& raw : lines_of(text)) {
    std::string line = trimmed(raw);
    if (line.rfind("Thread", 0) == 0 || line.rfind("thread", 0) == 0) {
      if (!threads.back().empty()) threads.emplace_back();
      continue;
    }
    Frame f;
    if (line.rfind("File \"", 0) == 0) {  // File "train.py", line 87 in step
      auto close = line.find('"', 6);
      auto at_line = line.find(", line ", close);
      auto in = line.find(" in ", at_line);
      if (close == std::string::npos || at_line == std::string::npos || in == std::string::npos) continue;
      f.file = line.substr(6, close - 6);
      f.line = line.substr(at_line + 7, in - at_line - 7);
      f.function = line.substr(in + 4);
    } else if (line.rfind('#', 0) == 0) {  // #3 train_step (train_binary) at train_binary.cpp:42
      auto space = line.find(' ');
      if (space == std::string::npos) continue;
      std::string rest = line.substr(space + 1);
      auto at = rest.rfind(" at ");
      if (at != std::string::npos) {
        std::string where = rest.substr(at + 4);
        auto colon = where.find(':');
        f.file = where.substr(0, colon);
        if (colon != std::string::npos) f.line = where.substr(colon + 1);
        rest = rest.substr(0, at);
      }
      f.function = rest.substr(0, rest.find(" ("));
    } else {
      continue;
    }
    threads.back().push_back(std::move(f));
  }
  for (const auto& t : threads)
    if (!t.empty() && (t.back().function == "<module>" || t.back().function == "main" ||
                       t.back().function.find("__libc_start") != std::string::npos))
      return t;
  for (const auto& t : threads)
    if (!t.empty()) return t;
  return {};
}

// The main thread is inside a collective (or waits for one's result).
bool waits_in_collective(const std::string& text) {
  static const char* const kMarks[] = {"all_reduce", "allreduce", "barrier", "broadcast", "all_gather", "allgather",
                                       "reduce_scatter", "all_to_all", "alltoall", "backward", "c10d", "gloo",
                                       "nccl", "ncclKernel", "Work::wait", "wait_tensor"};
  for (const Frame& f : main_thread_frames(text))
    for (const char* mark : kMarks)
      if (f.function.find(mark) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<int> likely_stuck(const std::vector<RankStack>& stacks, const std::vector<int>& silent,
                              const std::vector<int>& earlier) {
  auto stack_of = [&stacks](int rank) {
    return std::find_if(stacks.begin(), stacks.end(), [rank](const RankStack& s) { return s.rank == rank; });
  };
  std::vector<int> out;
  for (int rank : silent)
    if (auto it = stack_of(rank); it != stacks.end() && !waits_in_collective(it->text)) out.push_back(rank);
  if (!out.empty()) return out;
  const bool earlier_holds = !earlier.empty() && std::all_of(earlier.begin(), earlier.end(), [&](int rank) {
    auto it = stack_of(rank);
    return std::find(silent.begin(), silent.end(), rank) != silent.end() &&
           (it == stacks.end() || !waits_in_collective(it->text));
  });
  return earlier_holds ? earlier : silent;
}

int hang_root_cause_rank(const std::vector<int>& stuck, const std::vector<int>& quiet,
                         const std::vector<int>& past_deadline) {
  for (int rank : stuck)
    if (std::find(past_deadline.begin(), past_deadline.end(), rank) != past_deadline.end()) return rank;
  if (!stuck.empty() && stuck.size() < quiet.size()) return stuck.front();
  return past_deadline.front();
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string stack_summary(const std::string& text) {
  std::vector<Frame> frames = main_thread_frames(text);
  if (frames.empty()) {  // kernel-only: "wchan: futex_wait_queue"
    for (const std::string& line : lines_of(text))
      if (line.rfind("wchan: ", 0) == 0) return "in the kernel: " + line.substr(7);
    return "";
  }
  auto own = std::find_if(frames.begin(), frames.end(), [](const Frame& f) { return !f.file.empty() && !is_library_path(f.file); });
  const Frame& innermost = frames.front();
  if (own == frames.end()) return innermost.function;
  const bool has_parameters = !own->function.empty() && own->function.back() == ')';  // C++: "f(int)"
  std::string where =
      fmt::format("{}{} at {}:{}", own->function, has_parameters ? "" : "()", base_name(own->file), own->line);
  return own == frames.begin() ? where : fmt::format("{} ← {}", innermost.function, where);
}

std::string render_grouped_stacks(const std::vector<RankStack>& stacks, const std::vector<int>& silent,
                                  const std::string& heading, int world_size) {
  const std::vector<int> stuck = likely_stuck(stacks, silent);
  const std::set<int> stuck_set(stuck.begin(), stuck.end());
  struct Group {
    std::vector<const RankStack*> members;
    bool has_stuck = false;
  };
  std::map<std::string, Group> by_text;  // identical frames (and how they were taken)
  std::set<int> seen;
  for (const RankStack& s : stacks) {
    Group& g = by_text[s.source + "\n" + s.text];
    g.members.push_back(&s);
    g.has_stuck = g.has_stuck || stuck_set.count(s.rank);
    seen.insert(s.rank);
  }
  std::vector<const Group*> order;
  for (const auto& [text, g] : by_text) order.push_back(&g);
  // Stuck ranks first, then the smallest groups (the odd ones out), then by first rank.
  std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    if (a->has_stuck != b->has_stuck) return a->has_stuck;
    if (a->members.size() != b->members.size()) return a->members.size() < b->members.size();
    return a->members.front()->rank < b->members.front()->rank;
  });
  std::string out = fmt::format("stacks of {} rank(s), grouped by identical stack{}: {}\n", stacks.size(),
                                stuck.empty() ? "" : ", stuck first", heading);
  if (!stuck.empty() && stuck.size() < silent.size())
    out += fmt::format("  likely stuck: {} {} (the other ranks without progress wait in a collective for it)\n",
                       stuck.size() == 1 ? "rank" : "ranks", rank_ranges(stuck));
  for (const Group* g : order) {
    std::vector<int> ranks, stuck_here;
    std::set<std::string> hosts;
    for (const RankStack* s : g->members) {
      ranks.push_back(s->rank);
      if (stuck_set.count(s->rank)) stuck_here.push_back(s->rank);
      hosts.insert(fmt::format("node {} {}", s->node, s->host));
    }
    const RankStack& first = *g->members.front();
    std::string summary = stack_summary(first.text);
    std::string host_list;
    for (const auto& h : hosts) host_list += (host_list.empty() ? "" : ", ") + h;
    const std::string stuck_mark = stuck_here.empty()                 ? ""
                                   : stuck_here.size() == ranks.size() ? " (STUCK)"
                                                                       : fmt::format(" (STUCK: {})", rank_ranges(stuck_here));
    out += fmt::format("  {} {}{}: {} [{}; {}]\n", ranks.size() == 1 ? "rank" : "ranks", rank_ranges(ranks), stuck_mark,
                       summary.empty() ? "(no frames)" : summary, first.source, host_list);
    for (const std::string& line : lines_of(first.text)) out += "      " + line + "\n";
  }
  std::vector<int> missing;
  for (int r = 0; r < world_size; ++r)
    if (!seen.count(r)) missing.push_back(r);
  if (!missing.empty())
    out += fmt::format("  no stack from {} {} (its node did not answer in time, or the rank has ended)\n",
                       missing.size() == 1 ? "rank" : "ranks", rank_ranges(missing));
  return out;
}

std::string normalise_python_stack(const std::string& raw) {
  std::string out;
  for (const std::string& line : lines_of(raw)) {
    std::string t = trimmed(line);
    if (t.empty()) continue;
    if (t.rfind("Thread 0x", 0) == 0 || t.rfind("Current thread 0x", 0) == 0) {
      out += "Thread (most recent call first):\n";
      continue;
    }
    if (t.rfind("File \"", 0) == 0) out += "  " + t + "\n";
  }
  return out;
}

std::string normalise_native_stack(const std::string& raw) {
  std::string out;
  for (const std::string& line : lines_of(raw)) {
    if (line.rfind("TID ", 0) == 0) {
      out += "Thread:\n";
      continue;
    }
    if (line.rfind('#', 0) == 0) {  // "#0  0x00007f... func - /path/module"
      std::istringstream words(line);
      std::string number, address;
      words >> number >> address;
      std::string rest;
      std::getline(words, rest);
      rest = trimmed(rest);
      std::string function = rest, module;
      if (auto dash = rest.rfind(" - "); dash != std::string::npos) {
        function = trimmed(rest.substr(0, dash));
        module = base_name(trimmed(rest.substr(dash + 3)));
      } else if (rest.rfind("- ", 0) == 0) {
        function.clear();
        module = base_name(trimmed(rest.substr(2)));
      }
      if (function.empty()) function = "??";
      if (auto anon = function.find("(anonymous namespace)::"); anon != std::string::npos)
        function.erase(anon, 23);  // noise in every frame of a file's own helpers
      out += fmt::format("  {} {}{}\n", number, function, module.empty() ? "" : " (" + module + ")");
      continue;
    }
    std::string t = trimmed(line);  // "    /path/file.cpp:42:10": the frame's source line
    if (!out.empty() && !t.empty() && t.find(':') != std::string::npos && line.rfind("    ", 0) == 0 &&
        out.back() == '\n') {
      std::string where = t;
      auto last = where.rfind(':');
      if (last != std::string::npos && where.find(':') != last) where = where.substr(0, last);  // drop the column
      out.pop_back();
      out += " at " + where + "\n";
    }
  }
  return out;
}

std::string normalise_gdb_stack(const std::string& raw) {
  std::string out;
  for (const std::string& line : lines_of(raw)) {
    if (line.rfind("Thread ", 0) == 0) {  // Thread 1 (Thread 0x7f... (LWP 42) "name"):
      out += "Thread:\n";
      continue;
    }
    if (line.rfind('#', 0) != 0) continue;
    std::istringstream words(line);  // "#0  0x00007f... in pause () at ../pause.c:29" or "#1  main () at t.cpp:9"
    std::string number, word;
    words >> number >> word;
    std::string rest;
    std::getline(words, rest);
    if (word.rfind("0x", 0) == 0) {
      rest = trimmed(rest);
      if (rest.rfind("in ", 0) == 0) rest = rest.substr(3);
    } else {
      rest = word + rest;
    }
    out += fmt::format("  {} {}\n", number, trimmed(rest));
  }
  return out;
}

}  // namespace ddplaunch
