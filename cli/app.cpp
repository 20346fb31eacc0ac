#include "cli/app.hpp"

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"

namespace rnicsim::cli {
namespace {

// The subcommand the command line chose, if CLI11 got as far as one.
const Command* chosen(const CLI::App& app) {
  for (const Command& c : kCommands)
    if (app.get_subcommand(c.name)->parsed()) return &c;
  return nullptr;
}

// A refused command line: CLI11's message (it names the option), then where help is.
int refuse(const CLI::App& app, const std::string& message, std::ostream& err) {
  const Command* c = chosen(app);
  const std::string who = c != nullptr ? std::string("rnicsim ") + c->name : "rnicsim";
  err << who << ": " << message << "\n(" << who << " --help lists the " << (c ? "options" : "subcommands") << ")\n";
  return kExitUsage;
}

}  // namespace

void build_app(CLI::App& app, std::vector<Action>& actions, const Program& program) {
  app.name("rnicsim");
  app.description("rnicsim: a software RDMA NIC on a simulated fabric (docs/ARCHITECTURE.md)");
  app.formatter(help_formatter());
  app.set_version_flag("--version", std::string("rnicsim ") + RNICSIM_VERSION);
  app.require_subcommand(1, 1);
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    if (c.hidden) sub->group("");
    actions.push_back(c.add(*sub, program));
  }
  app.footer("rnicsim SUBCOMMAND --help lists a subcommand's options.");  // after: subcommands would inherit it
}

Program split_program(std::vector<std::string>& args) {
  const auto is_word = [](const std::string& a) { return a.empty() || a[0] != '-'; };
  const auto sub = std::find_if(args.begin(), args.end(), is_word);
  const auto c = std::find_if(std::begin(kCommands), std::end(kCommands),
                              [&](const Command& k) { return sub != args.end() && *sub == k.name; });
  std::vector<std::string>::iterator kept_end, first;  // args keep [begin, kept_end); the program starts at first
  if (c != std::end(kCommands) && c->program_at == ProgramAt::AfterFirst) {
    const auto host = std::find_if(sub + 1, args.end(), is_word);  // which the parser reads
    if (host == args.end()) return {};
    kept_end = first = host + 1;
  } else {
    kept_end = std::find(args.begin(), args.end(), "--");
    if (kept_end == args.end()) return {};
    first = kept_end + 1;
  }
  Program program(first, args.end());
  args.erase(kept_end, args.end());
  return program;
}

int run_command_line(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  const bool had_dash = std::find(args.begin(), args.end(), "--") != args.end();
  const Program program = split_program(args);
  CLI::App app;
  std::vector<Action> actions;
  build_app(app, actions, program);
  if (args.empty() && !had_dash) {
    err << app.help();
    return kExitUsage;
  }
  if (!args.empty() && args.front() == "help") {  // rnicsim help [SUBCOMMAND]
    args.erase(args.begin());
    args.push_back("--help");
  }
  // Top-level options take no value: the first other word is the subcommand.
  const auto word = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.empty() || a[0] != '-'; });
  if (word != args.end() && std::none_of(std::begin(kCommands), std::end(kCommands),
                                         [&](const Command& c) { return *word == c.name; }))
    return refuse(app, "unknown command '" + *word + "'", err);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    return refuse(app, e.what(), err);
  }
  const Command* c = chosen(app);
  if (c->program_at == ProgramAt::None && had_dash) return refuse(app, "takes nothing after --", err);
  if (c->program_at == ProgramAt::AfterDash && program.empty())
    return refuse(app, "the program goes after --: -- PROGRAM ARGS", err);
  if (c->program_at == ProgramAt::AfterFirst && program.empty())
    return refuse(app, "the command goes after the host: HOST COMMAND", err);
  return actions[static_cast<size_t>(c - kCommands)]();
}

}  // namespace rnicsim::cli
