#include "cli/complete.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "scenario/params.hpp"

namespace rnicsim::cli {
namespace {

std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> v;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) v.push_back("--" + n);
  return v;
}

// An option's choices: the names in its type ("on|off"), else none.
std::vector<std::string> choices(const CLI::Option& o) {
  std::vector<std::string> v;
  const std::string t = o.get_type_name().substr(0, o.get_type_name().find(':'));
  if (t.find('|') == std::string::npos) return v;
  for (size_t at = 0; at != std::string::npos;) {
    const size_t bar = t.find('|', at);
    v.push_back(t.substr(at, bar == std::string::npos ? bar : bar - at));
    at = bar == std::string::npos ? bar : bar + 1;
  }
  return v;
}

// --set's paths, with the scenario file's list elements when one was named: the
// first word of the subcommand's, not an option or its value, that reads as a
// YAML map (bash splits "a=b" into three words: those are no files).
std::vector<std::string> set_paths(const CLI::App& sub, const std::vector<std::string>& words) {
  YAML::Node root;
  for (size_t i = 0; i < words.size() && !root.IsMap(); ++i) {
    if (words[i].starts_with("-")) {
      const CLI::Option* o = sub.get_option_no_throw(words[i]);
      if (o != nullptr && o->get_expected_max() > 0) ++i;  // its value
      continue;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(words[i], ec)) continue;  // a FIFO would block the shell
    try {
      root = YAML::LoadFile(words[i]);
    } catch (const std::exception&) {
      root = YAML::Node();
    }
  }
  std::vector<std::string> v;
  for (const scenario::OverridePath& p : scenario::override_paths(root)) v.push_back(p.path + "=");
  return v;
}

// Candidates for the last word of `words`, which follow the subcommand `sub`.
std::vector<std::string> for_subcommand(const CLI::App& sub, const std::vector<std::string>& words) {
  if (std::find(words.begin(), words.end() - 1, "--") != words.end() - 1) return {};  // exec's program
  // The option before the word; bash splits "--set=nic." into "--set", "=", "nic.".
  const size_t at = words.size() >= 3 && words[words.size() - 2] == "=" ? words.size() - 3 : words.size() - 2;
  const CLI::Option* prev =
      words.size() >= 2 && words[at].starts_with("--") ? sub.get_option_no_throw(words[at]) : nullptr;
  if (prev != nullptr && prev->get_expected_max() > 0)
    return prev->check_lname("set") ? set_paths(sub, {words.begin(), words.begin() + static_cast<long>(at)})
                                    : choices(*prev);
  if (words.back().starts_with("-")) return long_names(sub);
  return {};
}

std::vector<std::string> candidates(const CLI::App& app, const std::vector<std::string>& words) {
  for (size_t i = 1; i + 1 < words.size(); ++i) {
    if (words[i].starts_with("-")) continue;
    const auto sub = app.get_subcommands([&](const CLI::App* s) { return s->get_name() == words[i]; });
    if (sub.empty()) return {};
    return for_subcommand(*sub.front(), {words.begin() + static_cast<long>(i) + 1, words.end()});
  }
  std::vector<std::string> v = long_names(app);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    v.push_back(sub->get_name());
  return v;
}

}  // namespace

std::vector<std::string> completions(const CLI::App& app, const std::vector<std::string>& words) {
  if (words.size() < 2) return {};
  std::vector<std::string> v = candidates(app, words);
  std::erase_if(v, [&](const std::string& c) { return !c.starts_with(words.back()); });
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

Action add_complete(CLI::App& sub, const Program& words) {
  return [&sub, &words] {
    for (const std::string& c : completions(*sub.get_parent(), words)) std::cout << c << '\n';
    return kExitOk;
  };
}

}  // namespace rnicsim::cli
