// The debug console against what it cannot trust or cannot keep up with, with real launchers,
// real pdb workers and real pseudo-terminals: a squatter "master" that answers `ddplaunch debug`
// with escape sequences, or refuses it; a line typed at another terminal that carries a line
// break and escapes; a crowd of connections that makes the master drop polls; a line far over
// the bound on a client's stdin; a megabyte pasted at node 0's prompt.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ddplaunch/rendezvous/client.h"
#include "launcher_test_env.h"
#include "process_runner.h"
#include "rendezvous/fake_rendezvous_master.h"
#include "rendezvous/raw_peer.h"
#include "terminal_process.h"
#include "wire/inspection_messages.h"

namespace dt = ddplaunch::testing;
using namespace std::chrono_literals;

namespace {

constexpr auto kStopBound = 60s;  // python's start and its first pdb prompt on a loaded machine
const std::string kToken = "hostile-console-test-token-8d1e";

// Rank R stops in pdb at once with `secret` = 424242 + R, then prints "rank R finished".
std::string write_breakpoint_script(const std::string& dir) {
  const std::string path = dir + "/stops.py";
  std::ofstream out(path);
  out << "import os\n"
         "rank = int(os.environ['RANK'])\n"
         "secret = 424242 + rank\n"
         "breakpoint()\n"
         "print('rank', rank, 'finished', flush=True)\n";
  return path;
}

// One node, one rank, no terminal of its own: only `ddplaunch debug` reaches its console.
struct StoppedJob {
  std::string dir;
  int port = 0;
  std::string job_id;
  std::string master() const { return "127.0.0.1:" + std::to_string(port); }
  dt::BackgroundProcess node;
};

void start_stopped_job(StoppedJob& job, const std::string& name) {
  job.dir = dt::temp_dir("hostile-console-");
  const std::string script = write_breakpoint_script(job.dir);
  job.port = dt::free_tcp_port();
  ASSERT_GT(job.port, 0);
  job.job_id = name + "-" + std::to_string(job.port);
  ASSERT_TRUE(job.node.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--nodes", "1", "--node-rank", "0", "--master",
                              job.master(), "--job-id", job.job_id, "--history-file", "off", "--grace", "2",
                              "--unattended-stop-timeout", "300", "--", "/usr/bin/python3", script},
                             {{"DDPLAUNCH_TOKEN", kToken}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(job.node.wait_for_output("from another terminal, `ddplaunch debug --job " + job.job_id, kStopBound))
      << job.node.output_so_far();
}

std::vector<std::string> client_argv(const StoppedJob& job) {
  return {DDPLAUNCH_BIN, "debug", "--job", job.job_id, "--master", job.master()};
}

// What a script typing at the console would do: one `debug line` query with the job's token.
std::string send_console_line(const StoppedJob& job, const std::string& line) {
  ddplaunch::rendezvous::QueryFailure failure;
  std::string answer = ddplaunch::rendezvous::query_master("127.0.0.1", static_cast<std::uint16_t>(job.port),
                                                           job.job_id, kToken, "debug line " + line, 10s, failure);
  EXPECT_FALSE(failure.failed()) << failure.text;
  return answer;
}

// `c` from a script: the rank runs on, the job ends well.
void continue_and_expect_success(StoppedJob& job) {
  EXPECT_EQ(send_console_line(job, "c"), "ok");
  dt::RunResult r = job.node.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 0 finished"), std::string::npos) << r.output;
}

// The job ended: a client still attached ends too, exit status 0, and says why.
template <class Client>
void expect_client_ends_with_the_job(Client& client) {
  dt::RunResult left = client.wait(30s);
  EXPECT_EQ(left.exit_code, 0) << left.output.substr(0, 20000);
  EXPECT_NE(left.output.find("the job has ended"), std::string::npos) << left.output.substr(0, 20000);
}

long syscalls_read(pid_t pid) {
  std::ifstream io("/proc/" + std::to_string(pid) + "/io");
  for (std::string key; io >> key;) {
    long value = 0;
    io >> value;
    if (key == "syscr:") return value;
  }
  return -1;
}

// A squatter on the port: every connection is greeted and answered by `answer` (no token
// proof: the client here has no token, as `ddplaunch debug --master` without one).
rdzv_test::Frame frame(const char* kind, std::map<std::string, std::string> fields = {}) {
  rdzv_test::Frame f;
  f.kind = kind;
  for (auto& [k, v] : fields) f.fields[k] = v;
  return f;
}

// A squatter's answer to a transcript read, in the protocol a current client reads.
std::string transcript_reply(const std::string& text, std::optional<std::string> prompt, std::size_t end) {
  ddplaunch::InspectionReply reply;
  reply.kind = ddplaunch::ReplyKind::Answer;
  reply.text = text;
  reply.prompt = std::move(prompt);
  reply.next = static_cast<long>(end);
  return ddplaunch::encode_inspection_reply(reply);
}

const std::string kForgedPrompt = "(Pdb) \x1b]0;owned\x07\x1b[2J";
const std::string kForgedText = "first line\n\x1b[31mred\x1b[0m\n\x1b]52;c;cHduZWQ=\x07" "clipboard\n\xc2\x9b" "2Jdone\n";

void expect_no_forged_sequences(const std::string& screen) {
  for (const std::string raw : {"\x1b]0;owned", "\x1b[31mred", "\x1b]52;", "\xc2\x9b", "\x1b[2J"})
    EXPECT_EQ(screen.find(raw), std::string::npos) << "a raw escape reached the terminal:\n" << screen;
}

}  // namespace

// A squatter answers `ddplaunch debug` with a transcript and a prompt full of escape sequences
// (window title, clipboard, clear screen, a C1 CSI): the client's terminal shows them as visible
// escapes, the transcript's line breaks kept.
TEST(HostileConsole, ASquattersTranscriptAndPromptArePrintedAsVisibleEscapes) {
  rdzv_test::FakeRendezvousMaster squatter(
      [](const rdzv_test::Frame& request, const std::string&) {
        auto query = request.fields.find("query");
        const auto asked = query == request.fields.end() ? ddplaunch::Result<ddplaunch::InspectionQuery>{}
                                                         : ddplaunch::decode_inspection_query(query->second);
        const bool first = asked && asked->ask == ddplaunch::InspectionAsk::DebugPoll && asked->from == 0;
        return std::vector<rdzv_test::Frame>{
            frame("welcome"), frame("status_reply", {{"text", transcript_reply(first ? kForgedText : "", kForgedPrompt,
                                                                               kForgedText.size())}})};
      },
      /*every_connection=*/true);
  dt::TerminalProcess client;
  ASSERT_TRUE(client.start({DDPLAUNCH_BIN, "debug", "--job", "squatted", "--master",
                            "127.0.0.1:" + std::to_string(squatter.port())},
                           {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(client.wait_for_output("done", 20s)) << client.output();
  ASSERT_TRUE(client.wait_for_output("(Pdb) \\x1b]0;owned\\x07\\x1b[2J", 20s)) << client.output();
  const std::string screen = client.output();
  EXPECT_NE(screen.find("first line\r\n\\x1b[31mred\\x1b[0m\r\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find("\\u009b2Jdone"), std::string::npos) << screen;
  expect_no_forged_sequences(screen);
  client.type("\x03");  // Ctrl-C at the prompt: the client leaves
  EXPECT_FALSE(client.wait(20s).timed_out);
}

// A squatter that refuses: the refusal is said as one (its reason made visible), exit status
// 1 — at the first look and in the middle of a session — never "the job has ended".
TEST(HostileConsole, ARefusalIsToldApartFromTheEndOfTheJob) {
  const std::string reason = "too many clients\x1b[2J\x1b[H\n[ddplaunch] forged";
  {
    rdzv_test::FakeRendezvousMaster refusing(
        [&](const rdzv_test::Frame&, const std::string&) {
          return std::vector<rdzv_test::Frame>{frame("refuse", {{"reason", reason}})};
        },
        true);
    dt::RunResult r = dt::run_command(
        {DDPLAUNCH_BIN, "debug", "--job", "squatted", "--master", "127.0.0.1:" + std::to_string(refusing.port())}, 30s,
        {}, dt::kLauncherEnvToUnset);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("refused: too many clients\\x1b[2J\\x1b[H\\n[ddplaunch] forged"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("has ended"), std::string::npos) << r.output;
    expect_no_forged_sequences(r.output);
  }
  auto answered = std::make_shared<std::atomic<int>>(0);
  rdzv_test::FakeRendezvousMaster later_refusing(
      [&, answered](const rdzv_test::Frame&, const std::string&) {
        if (answered->fetch_add(1) < 3)
          return std::vector<rdzv_test::Frame>{frame("welcome"),
                                               frame("status_reply", {{"text", transcript_reply("", std::nullopt, 0)}})};
        return std::vector<rdzv_test::Frame>{frame("refuse", {{"reason", reason}})};
      },
      true);
  dt::RunResult r = dt::run_command(
      {DDPLAUNCH_BIN, "debug", "--job", "squatted", "--master", "127.0.0.1:" + std::to_string(later_refusing.port())},
      30s, {}, dt::kLauncherEnvToUnset);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("refused"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("has ended"), std::string::npos) << r.output;
  expect_no_forged_sequences(r.output);
}

// Lines from other terminals reach node 0's screen made printable: a line break inside one
// starts no forged line (and the line is refused), an escape is shown, not obeyed. The
// `ddplaunch debug` client that typed a line does not see it again as another terminal's.
TEST(HostileConsole, LinesFromOtherTerminalsArePrintableAndNotEchoedToTheirSender) {
  StoppedJob job;
  start_stopped_job(job, "hc-echo");
  const std::string answer = send_console_line(job, "p 1\n[rank 0] forged line\x1b[2J");
  EXPECT_EQ(answer.rfind("error:", 0), 0u) << answer;
  ASSERT_TRUE(job.node.wait_for_output("[another terminal] p 1\\n[rank 0] forged line\\x1b[2J", 20s))
      << job.node.output_so_far();

  dt::TerminalProcess client;
  ASSERT_TRUE(client.start(client_argv(job), {{"DDPLAUNCH_TOKEN", kToken}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(client.wait_for_output("rank 0 (Pdb) ", 30s)) << client.output();
  const std::size_t mark = client.output_size();
  client.type("p secret\r");
  ASSERT_TRUE(client.wait_for_output("424242", 20s, mark)) << client.output();
  ASSERT_TRUE(job.node.wait_for_output("[another terminal] p secret", 20s)) << job.node.output_so_far();
  EXPECT_EQ(client.output().find("[another terminal] p secret"), std::string::npos) << client.output();
  expect_no_forged_sequences(job.node.output_so_far());
  EXPECT_EQ(job.node.output_so_far().find("\n[rank 0] forged"), std::string::npos) << job.node.output_so_far();

  client.type("c\r");
  dt::RunResult node = job.node.wait(60s);
  EXPECT_EQ(node.exit_code, 0) << node.output;
  expect_client_ends_with_the_job(client);
}

// A crowd at the master's door (as many unproven connections as it admits from one address)
// makes it close the client's polls at once for a while: the client retries and stays, and
// only the real end of the job ends it.
TEST(HostileConsole, DroppedPollsAreRetriedNotTakenForTheEndOfTheJob) {
  StoppedJob job;
  start_stopped_job(job, "hc-crowd");
  dt::BackgroundProcess client;
  ASSERT_TRUE(client.start(client_argv(job), {{"DDPLAUNCH_TOKEN", kToken}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(client.wait_for_output("rank 0 (Pdb)", 30s)) << client.output_so_far();
  {
    std::vector<std::unique_ptr<rdzv_test::RawPeer>> crowd;
    for (int i = 0; i < 16; ++i) crowd.push_back(std::make_unique<rdzv_test::RawPeer>(job.port));
    std::this_thread::sleep_for(2s);  // 20 of the client's polls; the master drops a silent peer after 5 s
  }
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(dt::process_alive(client.pid())) << client.output_so_far();
  EXPECT_EQ(client.output_so_far().find("has ended"), std::string::npos) << client.output_so_far();
  continue_and_expect_success(job);
  expect_client_ends_with_the_job(client);
}

// A script feeds `ddplaunch debug` a 2 MB line, then a command: the long line is cut with a
// word (not taken for the end of the job), the command is answered, and stdin is read in
// blocks (not a system call per byte).
TEST(HostileConsole, ALineOverTheBoundOnStdinIsCutAndTheNextOneAnswered) {
  StoppedJob job;
  start_stopped_job(job, "hc-long");
  const std::string input = job.dir + "/input.txt";
  {
    std::ofstream out(input);
    out << std::string(2 << 20, 'x') << "\np secret\n";
  }
  dt::BackgroundProcess client;
  ASSERT_TRUE(client.start({"/bin/sh", "-c", "exec \"$0\" debug --job \"$1\" --master \"$2\" < \"$3\"", DDPLAUNCH_BIN,
                            job.job_id, job.master(), input},
                           {{"DDPLAUNCH_TOKEN", kToken}}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(client.wait_for_output("424242", 30s)) << client.output_so_far().substr(0, 20000);
  const std::string seen = client.output_so_far();
  EXPECT_NE(seen.find("line cut at 4096 bytes"), std::string::npos) << seen.substr(0, 20000);
  const long reads = syscalls_read(client.pid());
  EXPECT_GE(reads, 0);
  EXPECT_LT(reads, 20000) << "read system calls for 2 MB of stdin";
  std::cout << "read system calls of `ddplaunch debug` for 2 MB of stdin: " << reads << "\n";
  continue_and_expect_success(job);
  expect_client_ends_with_the_job(client);
}

// A megabyte pasted at node 0's own prompt (no newline in it), then Enter and a command: what
// the launcher writes to the terminal stays a small multiple of a line, not a redraw per read;
// the cut is said; the next command still gets its answer.
TEST(HostileConsole, AMegabytePastedAtTheConsoleIsCutAndNotRedrawnPerRead) {
  const std::string dir = dt::temp_dir("hostile-console-");
  dt::TerminalProcess t;
  ASSERT_TRUE(t.start({DDPLAUNCH_BIN, "--nproc-per-node", "1", "--history-file", "off", "--grace", "2", "--",
                       "/usr/bin/python3", write_breakpoint_script(dir)},
                      {}, dt::kLauncherEnvToUnset));
  ASSERT_TRUE(t.wait_for_output("rank 0 (Pdb) ", kStopBound)) << t.output();
  const std::size_t mark = t.output_size();
  const std::string block(4096, 'x');
  constexpr std::size_t kPasted = 1 << 20;
  for (std::size_t sent = 0; sent < kPasted; sent += block.size()) t.type(block);  // each write blocks until read
  t.type("\r");
  t.type("p secret\r");
  ASSERT_TRUE(t.wait_for_output("424242", 60s, mark)) << t.output().substr(mark, 20000);
  const std::string after = t.output().substr(mark);
  EXPECT_NE(after.find("line cut at 4096 bytes"), std::string::npos) << after.substr(0, 20000);
  EXPECT_LT(after.size(), 256u << 10) << "bytes written to the terminal for a 1 MB paste";
  std::cout << "bytes written to the terminal for a 1 MiB paste, Enter and `p secret`: " << after.size() << "\n";
  t.type("c\r");
  dt::RunResult r = t.wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 20000);
}
