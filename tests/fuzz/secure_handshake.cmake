# libFuzzer target for a secured domain's join port (docs/security.md): after
# "SPINDLE-SECURE 1" anyone that reaches the port may send it any bytes as a TLS handshake.
# It compiles the TLS socket and the credentials (runtime/src/security) and the test PKI.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(secure_handshake ${CMAKE_CURRENT_LIST_DIR}/secure_handshake.cpp
  ${_rt}/security/tls_socket.cpp ${_rt}/security/credentials.cpp
  ${PROJECT_SOURCE_DIR}/tests/security/pki.cpp)
target_include_directories(secure_handshake PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include
                                                   ${PROJECT_SOURCE_DIR}/tests/security)
find_package(OpenSSL 3 REQUIRED COMPONENTS SSL Crypto)
target_link_libraries(secure_handshake PRIVATE OpenSSL::SSL OpenSSL::Crypto spindle_warnings
                                               Threads::Threads)
