// packet_capture <interface> <file>: records every frame seen on <interface> ("any": on
// every interface of the network namespace; an AF_PACKET socket, as tcpdump would open one)
// into <file>, back to back, until a line "stop" comes on standard input or 120 s pass; then prints
// "captured <frames> <bytes>" and exits. It says "ready" once the socket is bound. For the tests
// that check what travels on a network (the security issue's capture: tests/hosts/hosts_test.cpp
// "[secure]"); it needs CAP_NET_RAW in the network namespace it runs in (a host of
// tests/hosts/hosts.hpp has it).
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cout << "FAIL usage: packet_capture <interface> <file>" << std::endl;
    return 2;
  }
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) {
    std::cout << "FAIL socket(AF_PACKET): " << std::strerror(errno) << std::endl;
    return 1;
  }
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_ALL);
  // "any": every interface of the namespace (a bridge's own interface sees only the frames
  // for itself; the frames it forwards between its ports pass on the ports).
  const bool any = std::strcmp(argv[1], "any") == 0;
  at.sll_ifindex = any ? 0 : static_cast<int>(::if_nametoindex(argv[1]));
  if ((!any && at.sll_ifindex == 0) ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
    std::cout << "FAIL bind to " << argv[1] << ": " << std::strerror(errno) << std::endl;
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  if (!out) {
    std::cout << "FAIL cannot write " << argv[2] << std::endl;
    return 1;
  }
  std::cout << "ready" << std::endl;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  long frames = 0, bytes = 0;
  std::string input;
  static char buf[65536];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p[2] = {{fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (::poll(p, 2, 100) < 0 && errno != EINTR) break;
    if ((p[0].revents & POLLIN) != 0) {
      const auto n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        out.write(buf, n);
        ++frames;
        bytes += n;
      }
    }
    if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
      char c[256];
      const auto n = ::read(STDIN_FILENO, c, sizeof c);
      if (n <= 0) break;
      input.append(c, static_cast<std::size_t>(n));
      if (input.find("stop") != std::string::npos) break;
    }
  }
  // What the socket holds still.
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    out.write(buf, n);
    ++frames;
    bytes += n;
  }
  out.close();
  std::cout << "captured " << frames << " " << bytes << std::endl;
  ::close(fd);
  return 0;
}
