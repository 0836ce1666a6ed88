// This host's IPv4 network interfaces, for the addresses a participant gives and listens on
// across hosts (docs/membership.md, "Across hosts"): `node.host: auto` takes the address of
// the interface multicast discovery uses, and the discovery beacon (group/beacon.hpp) sends
// and listens there.
//
//   the interface named (discovery.multicast.interface: a name such as eth0, or one of its
//   IPv4 addresses)
//   or, named none: the first interface, in the kernel's order, that is up, not loopback,
//   has multicast and an IPv4 address; one whose link is up (a carrier) before one that is
//   only configured up (a cable not plugged in yet: a host whose link comes up after its
//   participants started keeps the address it will be reached at)
//   or none at all: no interface but loopback (a container, a namespace with only lo)
//
// node.host auto takes that interface's address, or, where no interface has multicast, the
// first up, non-loopback interface's (first_network_interface), so that a network without
// multicast still reaches the node through contacts.
//
// Threading: free functions over getifaddrs(); safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spindle::core {

struct Interface {
  std::string name;        // e.g. "eth0"
  std::string address;     // its first IPv4 address, dotted
  std::uint32_t ipv4 = 0;  // the same, in network byte order
  bool up = false;         // configured up (IFF_UP)
  bool running = false;    // and its link has a carrier (IFF_RUNNING)
  bool loopback = false;
  bool multicast = false;
};

// The interface `wanted` names (its name or one of its IPv4 addresses); empty `wanted`: the
// first up, non-loopback interface with multicast and an IPv4 address. nullopt with `why`
// saying what is missing ("no interface 'eth7' (interfaces here: lo, eth0)", "no interface
// but loopback has multicast").
[[nodiscard]] std::optional<Interface> find_interface(std::string_view wanted, std::string& why);

// The first up, non-loopback interface with an IPv4 address, multicast or not (the address
// node.host auto gives where no interface has multicast); nullopt where there is none.
[[nodiscard]] std::optional<Interface> first_network_interface();

// The dotted form of `ipv4` (network byte order), and the reverse (nullopt when `text` is
// not a dotted IPv4 address).
[[nodiscard]] std::string dotted(std::uint32_t ipv4);
[[nodiscard]] std::optional<std::uint32_t> parse_ipv4(std::string_view text);
// A dotted address, or the first IPv4 address a name resolves to (getaddrinfo: it may block
// on a name server); nullopt when it has none.
[[nodiscard]] std::optional<std::uint32_t> resolve_ipv4(const std::string& host);

}  // namespace spindle::core
