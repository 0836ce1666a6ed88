// The command line the two example programs share, and how they end on an error.
//
//   --samples N        readings the publisher writes and the subscriber expects (10)
//   --sensors K        sensors (DDS instances) the readings are spread over (4)
//   --timeout SECONDS  give up and exit 1 after this long (60)
//   --qos FILE         the QoS profile file (atomic.yaml, shipped with Spindle DDS)
//   --profile NAME     the profile in it (atomic)
//   --quiet            print the summary only
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <dds/dds.hpp>

namespace example {

struct Options {
  std::uint64_t samples = 10;
  std::uint32_t sensors = 4;
  std::chrono::seconds timeout{60};
  std::string qos_file = "atomic.yaml";
  std::string profile = "atomic";
  bool quiet = false;
};

inline constexpr const char* kUsage =
    "[--samples N] [--sensors K] [--timeout SECONDS] [--qos FILE] [--profile NAME] [--quiet]";

// False for an unknown option, a missing value or a bad number.
inline bool parse_options(int argc, char** argv, Options& o) {
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a == "--samples" && has_value) {
        o.samples = std::stoull(argv[++i]);
      } else if (a == "--sensors" && has_value) {
        o.sensors = static_cast<std::uint32_t>(std::stoul(argv[++i]));
      } else if (a == "--timeout" && has_value) {
        o.timeout = std::chrono::seconds(std::stoul(argv[++i]));
      } else if (a == "--qos" && has_value) {
        o.qos_file = argv[++i];
      } else if (a == "--profile" && has_value) {
        o.profile = argv[++i];
      } else if (a == "--quiet") {
        o.quiet = true;
      } else {
        return false;
      }
    }
  } catch (const std::exception&) {
    return false;
  }
  return o.sensors > 0;
}

// Runs a program's body. Every DCPS call reports failure with a dds::core exception whose
// message says what went wrong (a member that did not start, a bad line in a YAML file,
// ...); print it and exit 1.
template <class Body>
int run_reporting(const char* who, Body body) {
  try {
    return body();
  } catch (const dds::core::TimeoutError& e) {
    std::cerr << who << " timed out: " << e.what() << std::endl;
  } catch (const dds::core::Exception& e) {
    std::cerr << who << " DDS error: " << e.what() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << who << " error: " << e.what() << std::endl;
  }
  return EXIT_FAILURE;
}

}  // namespace example
