// Reading ddplaunch's output in integration tests (see output_parsing.h): one parser per line
// format, so every test reads "[node N rank R] ENV ..." and "FINAL ..." lines the same way.
#include "output_parsing.h"

#include <regex>
#include <sstream>

namespace ddplaunch::testing {

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

std::string all_output(const std::vector<RunResult>& results, const std::string& label) {
  std::string s;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const RunResult& r = results[i];
    s += "===== " + label + " " + std::to_string(i) + ": exit " + std::to_string(r.exit_code) +
         (r.timed_out ? " (TIMED OUT)" : "") + " after " + std::to_string(r.seconds) + " s\n" + r.output;
    if (!r.output.empty() && r.output.back() != '\n') s += "\n";
  }
  return s;
}

std::vector<EnvLine> env_lines(const std::string& output) {
  static const std::regex kLine(R"(^\[(?:node (\d+) )?rank (\d+)\] ENV ([A-Z_0-9]+)(?:=(.*)| unset)$)");
  std::vector<EnvLine> lines;
  std::istringstream in(output);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_match(text, m, kLine)) continue;
    EnvLine line;
    line.node = m[1].matched ? std::stoi(m[1]) : -1;
    line.rank = std::stoi(m[2]);
    line.name = m[3];
    if (m[4].matched) line.value = m[4];
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<FinalLine> final_lines(const std::string& output) {
  static const std::regex kLine(
      R"((?:\[(?:node (\d+) )?rank (\d+)\] )?FINAL rank=(\d+) loss_first=(\S+) loss_last=(\S+) checksum=(\S+))");
  std::vector<FinalLine> lines;
  for (std::sregex_iterator it(output.begin(), output.end(), kLine), end; it != end; ++it) {
    const std::smatch& m = *it;
    FinalLine line;
    line.prefix_node = m[1].matched ? std::stoi(m[1]) : -1;
    line.prefix_rank = m[2].matched ? std::stoi(m[2]) : -1;
    line.rank = std::stoi(m[3]);
    line.loss_first = std::stod(m[4]);
    line.loss_last = std::stod(m[5]);
    line.checksum = m[6];
    line.text = m[0];
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<pid_t> pids_after(const std::string& output, const std::string& tag) {
  std::vector<pid_t> pids;
  const std::regex re(tag + R"(=(\d+))");
  for (std::sregex_iterator it(output.begin(), output.end(), re), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  return pids;
}

}  // namespace ddplaunch::testing
