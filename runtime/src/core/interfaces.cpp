// This host's IPv4 interfaces (see interfaces.hpp).
#include "core/interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <map>
#include <vector>

namespace spindle::core {

namespace {

// Every interface with its first IPv4 address, in the kernel's order (getifaddrs lists an
// interface once per address; interfaces with no IPv4 address have ipv4 0).
std::vector<Interface> interfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  std::map<std::string, std::size_t> at;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_name == nullptr) continue;
    auto [it, fresh] = at.emplace(i->ifa_name, out.size());
    if (fresh) {
      Interface f;
      f.name = i->ifa_name;
      f.up = (i->ifa_flags & IFF_UP) != 0;
      f.running = f.up && (i->ifa_flags & IFF_RUNNING) != 0;
      f.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
      f.multicast = (i->ifa_flags & IFF_MULTICAST) != 0;
      out.push_back(std::move(f));
    }
    auto& f = out[it->second];
    if (f.ipv4 == 0 && i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET) {
      f.ipv4 = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
      f.address = dotted(f.ipv4);
    }
  }
  ::freeifaddrs(list);
  return out;
}

std::string names(const std::vector<Interface>& all) {
  std::string out;
  for (const auto& i : all)
    out += (out.empty() ? "" : ", ") + i.name;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string dotted(std::uint32_t ipv4) {
  in_addr a{};
  a.s_addr = ipv4;
  char buf[INET_ADDRSTRLEN] = "";
  (void)::inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

std::optional<std::uint32_t> parse_ipv4(std::string_view text) {
  in_addr a{};
  if (::inet_pton(AF_INET, std::string(text).c_str(), &a) != 1) return std::nullopt;
  return a.s_addr;
}

std::optional<Interface> find_interface(std::string_view wanted, std::string& why) {
  const auto all = interfaces();
  if (!wanted.empty()) {
    const auto address = parse_ipv4(wanted);
    for (const auto& i : all) {
      if (i.name != wanted && !(address && i.ipv4 == *address)) continue;
      if (i.ipv4 == 0) {
        why = "interface '" + i.name + "' has no IPv4 address";
        return std::nullopt;
      }
      return i;
    }
    why = "no interface '" + std::string(wanted) + "' (interfaces here: " + names(all) + ")";
    return std::nullopt;
  }
  // A link with a carrier first; else one configured up whose cable is not in yet.
  for (const bool carrier : {true, false})
    for (const auto& i : all)
      if (i.up && (i.running || !carrier) && !i.loopback && i.multicast && i.ipv4 != 0) return i;
  why = "no interface but loopback is up with multicast and an IPv4 address (interfaces here: " +
        names(all) + ")";
  return std::nullopt;
}

std::optional<Interface> first_network_interface() {
  const auto all = interfaces();
  for (const bool carrier : {true, false})
    for (const auto& i : all)
      if (i.up && (i.running || !carrier) && !i.loopback && i.ipv4 != 0) return i;
  return std::nullopt;
}

std::optional<std::uint32_t> resolve_ipv4(const std::string& host) {
  if (const auto literal = parse_ipv4(host)) return literal;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr)
    return std::nullopt;
  const auto ipv4 = reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr.s_addr;
  ::freeaddrinfo(res);
  return ipv4;
}

}  // namespace spindle::core
