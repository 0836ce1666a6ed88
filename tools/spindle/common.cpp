// What the subcommands share (command.hpp).
#include "command.hpp"

#include <algorithm>
#include <ctime>
#include <iostream>

namespace spindle_cli {

void add_domain_option(CLI::App* cmd, std::int32_t& domain) {
  cmd->add_option("--domain", domain, "The domain id (default: the domain file's, or 0)")
      ->check(CLI::Range(0, 0x7fffffff));
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << '\n';
  }
}

sigset_t block_stop_signals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  return stop;
}

dds::domain::DomainParticipant join(std::int32_t domain) {
  return dds::domain::DomainParticipant(domain < 0 ? dds::domain::default_id()
                                                   : static_cast<std::uint32_t>(domain));
}

bool stopped_within(const sigset_t& stop, double seconds) {
  const auto ns = static_cast<long>(seconds * 1e9);
  const timespec slice{ns / 1'000'000'000, ns % 1'000'000'000};
  const int sig = sigtimedwait(&stop, nullptr, &slice);
  return sig == SIGINT || sig == SIGTERM;
}

const spindle::types::Type* wait_for_type(dds::domain::DomainParticipant& participant,
                                          const std::string& topic, double wait,
                                          spindle::types::TypeLibrary& library,
                                          const sigset_t& stop, const char* command) {
  for (double waited = 0;; waited += 0.05) {
    if (const auto* type = spindle::types::discovered_type(participant, topic, library))
      return type;
    if (waited >= wait) {
      std::cerr << "spindle " << command << ": no member of domain " << participant.domain_id()
                << " announced topic '" << topic << "' with its type in " << wait << " s"
                << std::endl;
      return nullptr;
    }
    if (stopped_within(stop, 0.05)) return nullptr;
  }
}

}  // namespace spindle_cli
