// Random samples of a dynamic type as JSON, within everything the type allows (bounds,
// ranges, enumerators, bit widths, union labels), for tests that compare dynamic encoding
// with generated code's.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <spindle/types/dynamic_data.hpp>

#include <random>

namespace test_types {

// `depth` limits recursive types: past it, sequences and maps are empty.
spindle::types::Json random_sample(const spindle::types::Type& type, std::mt19937_64& rng,
                                   int depth = 0);

// The same value compared without the order of object keys.
bool same_json(const spindle::types::Json& a, const spindle::types::Json& b);

// The bytes of a hex file of interop/ (whitespace-separated pairs; '#' lines are comments).
// Throws std::runtime_error when it cannot be read.
std::vector<std::byte> load_hex_file(const std::string& path);

}  // namespace test_types
