// Hosts made of namespaces on one bridge (see hosts.hpp).
#include "hosts.hpp"

#include <signal.h>

#include <chrono>
#include <stdexcept>

#include "namespaces.hpp"

namespace spindle::testing {

namespace {

void must(const std::string& command) {
  if (!run_quietly(command)) throw std::runtime_error("'" + command + "' failed");
}

std::string host_exec() {
  return self_dir() + "/host_exec";
}

}  // namespace

std::string Hosts::enter() {
  if (auto why = enter_namespaces(); !why.empty()) return why;
  const auto ip = ip_tool();
  if (!run_quietly(ip + " link add br0 type bridge") || !run_quietly(ip + " link set br0 up"))
    return "cannot create a bridge in the new network namespace";
  return {};
}

std::string Hosts::address(std::uint32_t i) {
  return "10.253.0." + std::to_string(i);
}

Hosts::~Hosts() {
  for (auto& [i, p] : init_)
    p.reset();  // kills each host's pid 1, and with it everything the host still runs
}

void Hosts::add(std::uint32_t i, bool multicast) {
  const auto n = std::to_string(i);
  const auto ip = ip_tool();
  const auto in_ns = ip + " netns exec h" + n + " " + ip;
  must(ip + " netns add h" + n);
  must(ip + " link add v" + n + " type veth peer name p" + n);
  must(ip + " link set v" + n + " netns h" + n);
  must(ip + " link set p" + n + " master br0");
  must(ip + " link set p" + n + " up");
  must(in_ns + " addr add " + address(i) + "/24 dev v" + n);
  if (!multicast) must(in_ns + " link set v" + n + " multicast off");
  must(in_ns + " link set v" + n + " up");
  must(in_ns + " link set lo up");
  start(i);
}

void Hosts::start(std::uint32_t i) {
  // Names built in steps: GCC 12 at -O3 warns falsely (-Wrestrict) on "h" + std::to_string(i).
  std::string ns = "h";
  ns += std::to_string(i);
  auto init = std::make_unique<Process>(
      std::vector<std::string>{ip_tool(), "netns", "exec", ns, host_exec(), "--init"});
  const auto line = init->read_line(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  if (!line || line->rfind("host ", 0) != 0) {
    std::string why = "host ";
    why += std::to_string(i);
    why += " did not start: '";
    why += line.value_or("(nothing)");
    why += "'";
    throw std::runtime_error(why);
  }
  pid_[i] = std::stoi(line->substr(5));
  init_[i] = std::move(init);
}

std::unique_ptr<Process> Hosts::run(std::uint32_t i, const std::vector<std::string>& argv,
                                    bool stderr_too) {
  std::vector<std::string> a{host_exec()};
  if (stderr_too) a.emplace_back("--stderr");
  a.push_back(std::to_string(pid_.at(i)));
  a.insert(a.end(), argv.begin(), argv.end());
  return std::make_unique<Process>(a);
}

void Hosts::cut(std::uint32_t i) {
  must(ip_tool() + " link set p" + std::to_string(i) + " down");
}

void Hosts::mend(std::uint32_t i) {
  must(ip_tool() + " link set p" + std::to_string(i) + " up");
}

void Hosts::power_off(std::uint32_t i) {
  ::kill(pid_.at(i), SIGKILL);  // pid 1 of the host: the kernel kills the rest
  init_.erase(i);
}

void Hosts::power_on(std::uint32_t i) {
  start(i);
}

}  // namespace spindle::testing
