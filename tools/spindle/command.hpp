// What the subcommands of `spindle` share: how each one is added to the command line, and the
// ways to join the domain, to wait for a stop signal and to wait for a topic's type.
//
// Each subcommand lives in its own file and has one `add_<name>(app, action)` function: it
// adds the subcommand and its options to `app`, and when the command line names it, sets
// `action` to what runs it (its exit status). main.cpp calls them all, parses, and runs the
// action with its errors reported as "spindle <name>: <what>".
//
// Threading: the main thread only.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <dds/dds.hpp>
#include <spindle/types/dynamic_topic.hpp>

namespace spindle_cli {

using Action = std::function<int()>;

void add_witness(CLI::App& app, Action& action);
void add_subscribe(CLI::App& app, Action& action);
void add_publish(CLI::App& app, Action& action);
void add_ls(CLI::App& app, Action& action);
void add_ps(CLI::App& app, Action& action);
void add_why(CLI::App& app, Action& action);
void add_typeof(CLI::App& app, Action& action);
void add_perf(CLI::App& app, Action& action);
void add_log(CLI::App& app, Action& action);
void add_status(CLI::App& app, Action& action);

// Rows as left-aligned columns two spaces apart, each line after `indent`, without trailing
// spaces (ls, ps, why and status print their tables so).
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::string& indent = "");

// `--domain ID` on `cmd`, into `domain` (negative when not given: the domain file's, or 0).
void add_domain_option(CLI::App* cmd, std::int32_t& domain);

// SIGINT and SIGTERM, blocked before any thread starts (so that none of the participant's
// threads takes them): the commands wait for them with sigtimedwait.
sigset_t block_stop_signals();

// Whether SIGINT or SIGTERM came within `seconds` (a slice of a command's wait).
bool stopped_within(const sigset_t& stop, double seconds);

// A participant of `domain` (negative: the domain file's, or 0).
dds::domain::DomainParticipant join(std::int32_t domain);

// The type of `topic` as some member announced it, waiting up to `wait` seconds; null when
// none did in time (said on stderr as "spindle <command>: ...") or a signal came.
const spindle::types::Type* wait_for_type(dds::domain::DomainParticipant& participant,
                                          const std::string& topic, double wait,
                                          spindle::types::TypeLibrary& library,
                                          const sigset_t& stop, const char* command);

}  // namespace spindle_cli
