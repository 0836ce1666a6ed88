// Sample values of every generated test type, with every member set away from its default,
// shared by the round-trip, vector and hostile-input tests.
#pragma once

#include "all_constructs.hpp"

namespace samples {

Test::Primitives primitives();
Test::Strings strings();
Test::Collections collections();
Test::Derived derived();
Test::Annotated annotated(bool with_optionals);
Test::Extensible extensible(bool with_optional);
Test::Outer outer();
Test::Legacy legacy();
Test::TreeNode tree();
Test::Keywords keywords();
Test::Reopened reopened();

}  // namespace samples
