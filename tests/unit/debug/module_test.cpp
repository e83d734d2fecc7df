// The debug module, pure: a debugger's prompt and location read from a worker's output, the
// console's commands, and the console's behaviour with a recording screen.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "debug/console_commands.h"
#include "debug/console_relay.h"
#include "debug/debug_console.h"
#include "debug/pdb_text.h"

namespace dbg = ddplaunch::debug;
using ddplaunch::Generation;

TEST(PdbText, PromptsAreRecognisedOnlyAtTheEndOfTheUnterminatedText) {
  EXPECT_EQ(dbg::debugger_prompt("(Pdb) "), "(Pdb) ");
  EXPECT_EQ(dbg::debugger_prompt("(Pdb++) "), "(Pdb++) ");
  EXPECT_EQ(dbg::debugger_prompt("ipdb> "), "ipdb> ");
  EXPECT_EQ(dbg::debugger_prompt("(gdb) "), "(gdb) ");
  EXPECT_EQ(dbg::debugger_prompt("loading 50%(Pdb) "), "(Pdb) ");
  EXPECT_FALSE(dbg::debugger_prompt("(Pdb)"));
  EXPECT_FALSE(dbg::debugger_prompt("(Pdb) x"));
  EXPECT_FALSE(dbg::debugger_prompt("Epoch 3: "));
  EXPECT_FALSE(dbg::debugger_prompt(""));
}

TEST(PdbText, LocationLineGivesFileLineAndFunction) {
  auto where = dbg::parse_pdb_location("> /home/u/train.py(88)load_batch()");
  ASSERT_TRUE(where);
  EXPECT_EQ(where->file, "/home/u/train.py");
  EXPECT_EQ(where->line, 88);
  EXPECT_EQ(where->function, "load_batch");
  EXPECT_EQ(where->short_text(), "train.py:88 in load_batch");
  // A path with parentheses of its own; <module>.
  where = dbg::parse_pdb_location("> /tmp/run (2)/t.py(3)<module>()");
  ASSERT_TRUE(where);
  EXPECT_EQ(where->file, "/tmp/run (2)/t.py");
  EXPECT_EQ(where->line, 3);
  EXPECT_EQ(where->function, "<module>");
  EXPECT_FALSE(dbg::parse_pdb_location("-> x = 1"));
  EXPECT_FALSE(dbg::parse_pdb_location("> not a location"));
  EXPECT_FALSE(dbg::parse_pdb_location("> /t.py(x)f()"));
  EXPECT_EQ(dbg::parse_pdb_code_line("-> return secret"), "return secret");
  EXPECT_FALSE(dbg::parse_pdb_code_line("return secret"));
}

TEST(PdbText, TypedCommandsAreClassifiedAsPdbDoes) {
  using C = dbg::DebuggerCommand;
  EXPECT_EQ(dbg::classify_debugger_command("c"), C::Resume);
  EXPECT_EQ(dbg::classify_debugger_command(" continue "), C::Resume);
  EXPECT_EQ(dbg::classify_debugger_command("cont"), C::Resume);
  EXPECT_EQ(dbg::classify_debugger_command("q"), C::Quit);
  EXPECT_EQ(dbg::classify_debugger_command("exit"), C::Quit);
  EXPECT_EQ(dbg::classify_debugger_command("p c"), C::Other);
  EXPECT_EQ(dbg::classify_debugger_command("n"), C::Other);
  EXPECT_EQ(dbg::classify_debugger_command("continue_training()"), C::Other);
}

TEST(ConsoleCommands, ParsesEachCommandAndRefusesWithTheFix) {
  using K = dbg::ConsoleCommand::Kind;
  EXPECT_EQ(dbg::parse_console_command(":list").kind, K::List);
  EXPECT_EQ(dbg::parse_console_command("list").kind, K::List);
  auto attach = dbg::parse_console_command(":attach 5");
  EXPECT_EQ(attach.kind, K::Attach);
  EXPECT_EQ(attach.rank, 5);
  EXPECT_FALSE(attach.gdb);
  EXPECT_TRUE(dbg::parse_console_command(":attach 5 --gdb").gdb);
  auto cast = dbg::parse_console_command(":cast 0,4-7 p x + 1");
  ASSERT_EQ(cast.kind, K::Cast);
  EXPECT_EQ(cast.targets.ranks, (std::vector<int>{0, 4, 5, 6, 7}));
  EXPECT_EQ(cast.debugger_input, "p x + 1");
  auto by_node = dbg::parse_console_command(":cast node 1 bt");
  ASSERT_EQ(by_node.kind, K::Cast);
  EXPECT_EQ(by_node.targets.nodes, (std::vector<int>{1}));
  EXPECT_TRUE(dbg::parse_console_command(":cast all w").targets.all);
  EXPECT_EQ(dbg::parse_console_command(":continue").kind, K::ContinueAll);
  EXPECT_EQ(dbg::parse_console_command(":quit").kind, K::Quit);
  EXPECT_EQ(dbg::parse_console_command(":help").kind, K::Help);
  EXPECT_EQ(dbg::parse_console_command(":detach").kind, K::Detach);

  auto bad = dbg::parse_console_command(":attach x");
  EXPECT_EQ(bad.kind, K::Invalid);
  EXPECT_NE(bad.error.find(":attach 3"), std::string::npos) << bad.error;
  EXPECT_EQ(dbg::parse_console_command(":cast 0-2000000000 p x").kind, K::Invalid);  // bounded
  EXPECT_EQ(dbg::parse_console_command(":cast 1").kind, K::Invalid);
  EXPECT_EQ(dbg::parse_console_command(":list now").kind, K::Invalid);
  auto unknown = dbg::parse_console_command("p x");
  EXPECT_EQ(unknown.kind, K::Invalid);
  EXPECT_NE(unknown.error.find(":attach R"), std::string::npos) << unknown.error;
  EXPECT_TRUE(dbg::is_console_command("  :list"));
  EXPECT_FALSE(dbg::is_console_command("p x"));
}

TEST(ConsoleCommands, RanksNamesTheGlobalRanksToShowOrAll) {
  using K = dbg::ConsoleCommand::Kind;
  auto some = dbg::parse_console_command(":ranks 5,8-11");
  ASSERT_EQ(some.kind, K::ShowRanks);
  EXPECT_EQ(some.shown_ranks, (std::vector<int>{5, 8, 9, 10, 11}));
  auto all = dbg::parse_console_command(":ranks all");
  ASSERT_EQ(all.kind, K::ShowRanks);
  EXPECT_TRUE(all.shown_ranks.empty());
  for (const char* bad : {":ranks", ":ranks five", ":ranks 1 2", ":ranks 0-2000000000"}) {
    auto refused = dbg::parse_console_command(bad);
    EXPECT_EQ(refused.kind, K::Invalid) << bad;
    EXPECT_NE(refused.error.find(":ranks"), std::string::npos) << refused.error;
  }
}

TEST(ConsoleRelay, MarkedLinesAreTheConsolesAndNothingElse) {
  auto text = dbg::parse_relayed_console_line(std::string(dbg::kConsoleLineMark) + "rank 3 stopped");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->kind, dbg::RelayedConsoleLine::Kind::Text);
  EXPECT_EQ(text->text, "rank 3 stopped");
  auto prompt = dbg::parse_relayed_console_line(std::string(dbg::kPromptMark) + "rank 3 (Pdb) ");
  ASSERT_TRUE(prompt);
  EXPECT_EQ(prompt->text, "rank 3 (Pdb) ");
  EXPECT_EQ(dbg::parse_relayed_console_line(dbg::kNoPromptMark)->kind, dbg::RelayedConsoleLine::Kind::NoPrompt);
  EXPECT_FALSE(dbg::parse_relayed_console_line("[node 0 rank 1] ddplaunch-prompt (Pdb) "));
  EXPECT_FALSE(dbg::parse_relayed_console_line("ddplaunch-console x"));
}

namespace {
// A screen that remembers what the console showed.
class RecordingScreen : public dbg::ConsoleScreen {
 public:
  void print(std::string_view lines) override { text += lines; }
  void set_prompt(std::optional<std::string> p) override { prompt = std::move(p); }
  void hide_typing(bool h) override { hidden = h; }
  std::string text;
  std::optional<std::string> prompt;
  bool hidden = false;
};

struct ConsoleRig {
  RecordingScreen screen;
  std::vector<std::pair<int, std::string>> sent;  // (rank, line)
  std::vector<int> ended;
  dbg::DebugConsole console{screen, dbg::ConsoleActions{
                                        .send_input = [this](const dbg::StoppedRank& r, const std::string& l) {
                                          sent.emplace_back(r.rank, l);
                                        },
                                        .end_job = [this](const dbg::StoppedRank& r) { ended.push_back(r.rank); },
                                        .attach_gdb = nullptr,
                                    }};
  dbg::ConsoleClock::time_point now = dbg::ConsoleClock::now();
  void stop(int rank, int node, Generation generation = {}, std::string reason = "") {
    dbg::StoppedRank s;
    s.reason = std::move(reason);
    s.rank = rank;
    s.local_rank = rank % 2;
    s.node = node;
    s.host = "h" + std::to_string(node + 1);
    s.pid = 4000 + rank;
    s.generation = generation;
    s.where = dbg::StopLocation{"/w/train.py", 88, "load_batch", "x = batch[0]"};
    s.since = now;
    console.on_stopped(s);
  }
  void type(const std::string& line) { console.on_line(line, now); }
};
}  // namespace

TEST(DebugConsole, FirstStopIsAnnouncedAndAttachedAndLinesGoToThatRankOnly) {
  ConsoleRig rig;
  rig.stop(5, 1);
  EXPECT_NE(rig.screen.text.find("rank 5 (local 1, node 1, host h2, pid 4005) stopped at train.py:88 in load_batch"),
            std::string::npos)
      << rig.screen.text;
  EXPECT_EQ(rig.screen.prompt, "rank 5 (Pdb) ");
  rig.stop(2, 0);  // a second stop waits: no race for keystrokes
  EXPECT_EQ(rig.console.attached(), 5);
  EXPECT_NE(rig.screen.text.find("`:attach 2`"), std::string::npos) << rig.screen.text;
  rig.type("p x");
  ASSERT_EQ(rig.sent.size(), 1u);
  EXPECT_EQ(rig.sent[0], (std::pair<int, std::string>{5, "p x"}));
  EXPECT_EQ(rig.screen.prompt, "");  // the answer is on its way: keys are kept, no prompt drawn
  rig.console.on_output(5, "3\n", true);
  EXPECT_EQ(rig.screen.prompt, "rank 5 (Pdb) ");
  rig.console.on_output(2, "other\n", false);  // a non-attached rank's output is prefixed
  EXPECT_NE(rig.screen.text.find("[rank 2] other\n"), std::string::npos);
}

TEST(DebugConsole, ListCastContinueAndDetach) {
  ConsoleRig rig;
  rig.stop(0, 0);
  rig.stop(4, 1);
  rig.stop(5, 1);
  rig.now += std::chrono::seconds(75);
  rig.type(":list");
  EXPECT_NE(rig.screen.text.find("stopped for"), std::string::npos);
  EXPECT_NE(rig.screen.text.find("75 s"), std::string::npos) << rig.screen.text;
  rig.type(":cast node 1 p loss");
  EXPECT_EQ(rig.sent, (std::vector<std::pair<int, std::string>>{{4, "p loss"}, {5, "p loss"}}));
  rig.sent.clear();
  rig.type(":cast 0,5 c");  // resumes those two
  EXPECT_EQ(rig.console.stopped_ranks(), std::vector<int>{4});
  rig.type(":detach");
  EXPECT_FALSE(rig.console.attached());
  EXPECT_EQ(rig.screen.prompt, "(ddplaunch debug: 1 stopped) ");
  rig.type("attach 4");  // without ':' at the console's own prompt
  EXPECT_EQ(rig.console.attached(), 4);
  rig.sent.clear();
  rig.type(":continue");
  EXPECT_EQ(rig.sent, (std::vector<std::pair<int, std::string>>{{4, "c"}}));
  EXPECT_FALSE(rig.console.any_stopped());
  EXPECT_FALSE(rig.screen.prompt);  // no rank stopped: the terminal is the job's again
}

TEST(DebugConsole, QuitIsAskedOnceAndOnlyYesEndsTheJob) {
  ConsoleRig rig;
  rig.stop(3, 1);
  rig.type("q");
  EXPECT_TRUE(rig.sent.empty());  // pdb never sees it: the whole job ends, or nothing
  EXPECT_EQ(rig.screen.prompt, "end the job on every node (rank 3 quit the debugger)? [y/N] ");
  rig.type("");
  EXPECT_TRUE(rig.ended.empty());
  EXPECT_EQ(rig.screen.prompt, "rank 3 (Pdb) ");
  rig.console.on_end_of_input(rig.now);  // Ctrl-D: pdb's quit, asked the same way
  rig.type("yes");
  EXPECT_EQ(rig.ended, std::vector<int>{3});
  EXPECT_FALSE(rig.screen.prompt);
  rig.type("p x");  // nothing more is sent once the job ends
  EXPECT_TRUE(rig.sent.empty());
}

// `c` at a post-mortem stop lets the rank's exception end the job: its peers' follow-on
// failures stop in their debuggers too, but are not announced or attached; a new generation
// is the person's again.
TEST(DebugConsole, AfterAPostMortemContinueFollowOnStopsAreNotAnnounced) {
  ConsoleRig rig;
  rig.stop(1, 0, Generation{0}, "raised ValueError");
  rig.type("c");
  EXPECT_EQ(rig.sent, (std::vector<std::pair<int, std::string>>{{1, "c"}}));
  rig.screen.text.clear();
  rig.stop(0, 0, Generation{0}, "raised RuntimeError");
  EXPECT_EQ(rig.screen.text, "");
  EXPECT_FALSE(rig.console.attached());
  EXPECT_FALSE(rig.screen.prompt);
  rig.console.on_generation(Generation{1});
  rig.stop(0, 0, Generation{1}, "raised RuntimeError");
  EXPECT_EQ(rig.console.attached(), 0);
  // A breakpoint's `c` decides nothing: a later stop is announced.
  ConsoleRig plain;
  plain.stop(1, 0);
  plain.type("c");
  plain.stop(0, 0);
  EXPECT_EQ(plain.console.attached(), 0);
}

TEST(DebugConsole, ResumedRanksAndNewGenerationsLeaveTheConsole) {
  ConsoleRig rig;
  rig.stop(1, 0);
  rig.stop(2, 1);
  rig.console.on_resumed(1);  // it exited, or its node saw `c`
  EXPECT_FALSE(rig.console.attached());
  EXPECT_EQ(rig.console.stopped_ranks(), std::vector<int>{2});
  rig.console.on_generation(Generation{1});  // a restart: every stopped rank of generation 0 is gone
  EXPECT_FALSE(rig.console.any_stopped());
  rig.stop(2, 1, Generation{0});  // a late stop of generation 0 is ignored
  EXPECT_FALSE(rig.console.any_stopped());
  rig.stop(2, 1, Generation{1});
  EXPECT_EQ(rig.console.attached(), 2);
  rig.type(":attach 9");
  EXPECT_NE(rig.screen.text.find("rank 9 is not stopped in a debugger (stopped: 2)"), std::string::npos);
}

// Ranks' own prompts: the latest is shown and answered first, the rank named where several
// wait; a getpass prompt hides the typing; nobody asking sends to rank 0 and says so; a
// debugger stop takes the prompt line until it resumes; Ctrl-D is never a rank's answer.
TEST(DebugConsole, RankPromptsAreAnsweredLatestFirstAndNamedWhereAmbiguous) {
  ConsoleRig rig;
  rig.console.on_rank_prompt(dbg::RankPrompt{1, 0, {}, "[rank 1] continue? [y/N] ", false});
  rig.console.on_rank_prompt(dbg::RankPrompt{2, 1, {}, "[rank 2] token: ", true});
  EXPECT_EQ(rig.screen.prompt, "[rank 2] token: ");
  EXPECT_TRUE(rig.screen.hidden);
  rig.type("s3cret");
  EXPECT_NE(rig.screen.text.find("→ rank 2 (1 more rank(s) wait at a prompt"), std::string::npos) << rig.screen.text;
  EXPECT_EQ(rig.screen.text.find("s3cret"), std::string::npos);
  EXPECT_EQ(rig.screen.prompt, "[rank 1] continue? [y/N] ");
  EXPECT_FALSE(rig.screen.hidden);
  rig.stop(3, 0);  // a debugger stop takes the prompt line
  EXPECT_EQ(rig.screen.prompt, "rank 3 (Pdb) ");
  rig.type("c");
  EXPECT_EQ(rig.screen.prompt, "[rank 1] continue? [y/N] ");
  rig.console.on_end_of_input(rig.now);  // not an answer, not a quit
  EXPECT_NE(rig.screen.text.find("Ctrl-D is not passed to a rank"), std::string::npos);
  rig.type("");  // Enter: the default answer
  rig.type("hello");  // nobody asks: rank 0
  EXPECT_NE(rig.screen.text.find("→ rank 0 (no rank is waiting at a prompt"), std::string::npos);
  EXPECT_EQ(rig.sent, (std::vector<std::pair<int, std::string>>{{2, "s3cret"}, {3, "c"}, {1, ""}, {0, "hello"}}));
  EXPECT_EQ(rig.screen.prompt, std::nullopt);
}
