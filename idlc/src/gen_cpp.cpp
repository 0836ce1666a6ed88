// placeholder, replaced by the C++ generator
#include <spindle/idlc/generator.hpp>
namespace spindle::idlc {
std::vector<GeneratedFile> generate_cpp(const Specification&, const CppGeneratorOptions&) { return {}; }
}  // namespace spindle::idlc
