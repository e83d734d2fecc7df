// What another local user of a shared machine can read or plant, against the launcher's
// secrets and files: the values of -x/--env-file on a fan-out (in no process's command line,
// and whole at the workers), a timeline answer that is not JSON (refused; JSON that holds
// script stays text), and a symlink or FIFO planted at the --trace path (refused with a
// warning; the victim file unchanged, the launcher ends with its job's exit code).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include "ddplaunch/rendezvous/server.h"
#include "netns_cluster.h"
#include "process_runner.h"
#include "ssh_servers.h"
#include "wire/inspection_messages.h"

namespace {

using namespace std::chrono_literals;
namespace dt = ddplaunch::testing;
namespace fs = std::filesystem;

// Variables of the test's own environment that would change what the launcher does.
const std::vector<std::string> kUnsetEnv = {
    "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "SLURM_JOB_ID", "SLURM_NODEID", "SLURM_STEP_ID", "PET_NNODES", "DDPLAUNCH_TOKEN", "PYTHONUNBUFFERED"};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Every process's command line as the attacker reads it: /proc/*/cmdline, by uid 65534 (who
// may read any process's), one line each, NULs as spaces.
std::string command_lines_seen_by_another_user() {
  return dt::run_command({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c",
                          "for f in /proc/[0-9]*/cmdline; do tr '\\000' ' ' < \"$f\" 2>/dev/null; echo; done"},
                         30s)
      .output;
}

// The same read by this process (root: every process, whatever hidepid says).
std::string all_command_lines() {
  std::string all;
  DIR* proc = opendir("/proc");
  if (!proc) return all;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    all += read_file(std::string("/proc/") + entry->d_name + "/cmdline") + "\n";
  }
  closedir(proc);
  return all;
}

// True once every file of `paths` exists (bounded).
bool wait_for_files(const std::vector<std::string>& paths, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    bool all = true;
    for (const auto& p : paths) all = all && fs::exists(p);
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
}

// A fan-out's user variables carry a secret (the README's own WANDB_API_KEY example): while
// the job runs, no process's command line on the machine (the fan-out's ssh, the remote
// shell, the remote ddplaunch, its workers) holds the value; the workers get it byte for byte,
// newline, quotes, '=' and non-ASCII included. Before: `env WANDB_API_KEY=... ddplaunch` was
// ssh's last argument for the whole job.
TEST(HostileSecrets, DashXAndEnvFileValuesAreInNoCommandLineAndReachTheWorkersWhole) {
  if (auto r = dt::NetnsCluster::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (auto r = dt::SshServers::skip_reason(); !r.empty()) GTEST_SKIP() << r;
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces; reads as uid 65534 through setpriv)";
  dt::NetnsCluster cluster(dt::NetnsCluster::unique_name("sec"), 2);
  dt::SshServers ssh(cluster, {1, 2});
  const std::string marker = "k3y" + std::to_string(::getpid());
  const std::string from_x = "sx-" + marker + "\nline two 'single' \"double\" a=b=c caf\xc3\xa9 \xf0\x9f\x94\x91 ";
  const std::string from_file = "sf-" + marker + "=tail 'q' \"dq\" \xc3\xbc";
  const std::string env_file = ssh.dir() + "/job.env";
  std::ofstream(env_file) << "# the job's secrets\nexport WANDB_API_KEY=" << from_file << "\n";
  const std::string out = ssh.dir() + "/seen";
  fs::create_directories(out);
  // Each worker writes what it got, then waits (bounded) for the test to have looked.
  const std::string worker =
      "printf %s \"$SECRET_FROM_X\" > \"$0/x.$RANK\"; printf %s \"$WANDB_API_KEY\" > \"$0/f.$RANK\"; i=0; "
      "while [ ! -e \"$0/release\" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done";
  std::vector<std::string> argv{DDPLAUNCH_BIN, "--hosts", "h1,h2", "--nproc-per-node", "1", "--join-timeout", "60",
                                "--grace", "1", "-x", "SECRET_FROM_X", "--env-file", env_file,
                                "--", "/bin/sh", "-c", worker, out};
  dt::BackgroundProcess fanout;
  ASSERT_TRUE(fanout.start(cluster.exec_argv(1, argv),
                           {{"DDPLAUNCH_SSH", ssh.ssh_command()}, {"SECRET_FROM_X", from_x}}, kUnsetEnv));
  const bool started = wait_for_files({out + "/x.0", out + "/x.1", out + "/f.0", out + "/f.1"}, 120s);
  // Looked at while every node and worker runs, as the attacker and as root.
  const std::string attacker_view = command_lines_seen_by_another_user();
  const std::string root_view = all_command_lines();
  std::ofstream(out + "/release") << "seen\n";
  dt::RunResult result = fanout.wait(120s);
  ASSERT_TRUE(started) << fanout.output_so_far();
  EXPECT_NE(attacker_view.find("--token-stdin"), std::string::npos)
      << "the attacker's scan does not see the nodes' ddplaunch: it proves nothing\n" << attacker_view;
  EXPECT_EQ(attacker_view.find(marker), std::string::npos) << "a secret in a command line:\n" << attacker_view;
  EXPECT_EQ(root_view.find(marker), std::string::npos) << "a secret in a command line:\n" << root_view;
  ASSERT_FALSE(result.timed_out) << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* rank : {"0", "1"}) {
    EXPECT_EQ(read_file(out + "/x." + rank), from_x) << "rank " << rank;
    EXPECT_EQ(read_file(out + "/f." + rank), from_file) << "rank " << rank;
  }
}

// A master of the test's own: a real rendezvous server whose answer to every query is `answer`
// (as the text of a typed reply, the protocol a current client reads).
class AnsweringMaster {
 public:
  static constexpr const char* kJobId = "hostile-timeline";
  static constexpr const char* kToken = "hostile-timeline-token-0123456789";
  explicit AnsweringMaster(std::string answer) : work_(io_.get_executor()) {
    ddplaunch::rendezvous::ServerOptions options;
    options.job_id = kJobId;
    options.token = kToken;
    ddplaunch::rendezvous::ServerCallbacks callbacks;
    ddplaunch::InspectionReply reply;
    reply.kind = ddplaunch::ReplyKind::Answer;
    reply.text = std::move(answer);
    callbacks.query_text = [encoded = ddplaunch::encode_inspection_reply(reply)](const std::string&) { return encoded; };
    server_ = std::make_unique<ddplaunch::rendezvous::Server>(io_, options, callbacks);
    listen_error_ = server_->listen("127.0.0.1", 0);
    loop_ = std::thread([this] { io_.run(); });
  }
  ~AnsweringMaster() {
    boost::asio::post(io_, [this] { server_->close(); });
    work_.reset();
    loop_.join();
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  const std::string& listen_error() const { return listen_error_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::unique_ptr<ddplaunch::rendezvous::Server> server_;
  std::string listen_error_;
  std::thread loop_;
};

dt::RunResult take_timeline(const AnsweringMaster& master, const std::string& trace) {
  return dt::run_command({DDPLAUNCH_BIN, "timeline", "--master", master.endpoint(), "--job-id",
                          AnsweringMaster::kJobId, "--token", AnsweringMaster::kToken, "--trace", trace},
                         60s);
}

// An answer that is not JSON (before: put into the page's script as it came, and run by the
// browser that opened timeline.html) is refused, naming the master; nothing is written.
TEST(HostileSecrets, ATimelineAnswerThatIsNotJsonIsRefusedNamingTheMaster) {
  const std::string dir = dt::temp_dir("ddplaunch-timeline-answer-");
  AnsweringMaster master("null; document.title = 'owned by the master'; //");
  ASSERT_EQ(master.listen_error(), "");
  dt::RunResult r = take_timeline(master, dir + "/t.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the answer of the master at " + master.endpoint() + " is not a JSON trace"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir + "/t.json"));
  EXPECT_FALSE(fs::exists(dir + "/t.html"));
  fs::remove_all(dir);
}

// JSON whose strings hold script and line separators is written again as JSON, and the page
// holds the script only as escaped text.
TEST(HostileSecrets, ScriptInsideAJsonTimelineAnswerStaysText) {
  const std::string dir = dt::temp_dir("ddplaunch-timeline-answer-");
  AnsweringMaster master(
      "{\"traceEvents\": [], \"otherData\": {\"job_id\": \"</script><script>document.title='owned'</script>\","
      " \"root_cause\": \"a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\"}}");
  ASSERT_EQ(master.listen_error(), "");
  dt::RunResult r = take_timeline(master, dir + "/t.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_file(dir + "/t.html");
  ASSERT_FALSE(page.empty()) << r.output;
  EXPECT_EQ(page.find("<script>document.title"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script>\\u003cscript>document.title='owned'"), std::string::npos);
  EXPECT_EQ(page.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_EQ(page.find("\xe2\x80\xa9"), std::string::npos);
  EXPECT_NE(page.find("a\\u2028b\\u2029c"), std::string::npos);
  fs::remove_all(dir);
}

// A single-node job whose rank exits 3, with --trace `trace`.
dt::RunResult run_job_with_trace(const std::string& trace) {
  return dt::run_command({DDPLAUNCH_BIN, "--standalone", "--nproc-per-node", "1", "--history-file", "off", "--grace",
                          "1", "--trace", trace, "--", FAKE_WORKER_BIN, "--exit", "3"},
                         120s);
}

// Another user plants symlinks in a sticky, world-writable folder (/tmp's kind) at the --trace
// path and its page's, aimed at a 0600 file of root's: the job ends with its own exit code,
// says it did not write there, and the victim is unchanged (before: truncated, then HTML).
TEST(HostileSecrets, ATraceSymlinkPlantedByAnotherUserLeavesTheVictimUnchanged) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (plants the links as uid 65534 through setpriv)";
  const std::string base = dt::temp_dir("ddplaunch-trace-link-");
  const std::string shared = base + "/shared", victim = base + "/victim";
  fs::create_directory(shared);
  ASSERT_EQ(::chmod(base.c_str(), 0755), 0);  // the other user reaches the shared folder
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  std::ofstream(victim) << "root's private settings\n";
  ASSERT_EQ(::chmod(victim.c_str(), 0600), 0);
  for (const char* name : {"/trace.json", "/trace.html"}) {
    dt::RunResult planted = dt::run_command({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ln",
                                             "-s", victim, shared + name},
                                            30s);
    ASSERT_EQ(planted.exit_code, 0) << planted.output;
  }
  dt::RunResult r = run_job_with_trace(shared + "/trace.json");
  ASSERT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(shared + "/trace.json is a symbolic link, not a regular file"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_file(victim), "root's private settings\n");
  struct stat st {};
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_TRUE(fs::is_symlink(shared + "/trace.json"));
  fs::remove_all(base);
}

// A FIFO at the --trace path (before: the master's open for writing waited for a reader
// forever, after its job had ended) is refused: the launcher ends, with its job's exit code.
TEST(HostileSecrets, AFifoAtTheTracePathDoesNotKeepTheLauncherFromEnding) {
  const std::string dir = dt::temp_dir("ddplaunch-trace-fifo-");
  ASSERT_EQ(::mkfifo((dir + "/trace.json").c_str(), 0666), 0);
  dt::RunResult r = run_job_with_trace(dir + "/trace.json");
  ASSERT_FALSE(r.timed_out) << "the launcher did not end\n" << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(dir + "/trace.json is a FIFO, not a regular file"), std::string::npos) << r.output;
  // A regular file there is replaced whole, as before.
  fs::remove(dir + "/trace.json");
  std::ofstream(dir + "/trace.json") << "an older trace, longer than nothing at all";
  dt::RunResult again = run_job_with_trace(dir + "/trace.json");
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_EQ(read_file(dir + "/trace.json").rfind("{", 0), 0u);
  EXPECT_NE(read_file(dir + "/trace.html").find("</html>"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
