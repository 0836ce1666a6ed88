# security: a secured domain's identities, permissions and channels (DESIGN §12,
# docs/security.md): X.509 credentials and the TLS contexts made from them, the permissions
# document the layout enforces, and TLS over the join port's connections. OpenSSL 3.
find_package(OpenSSL 3 REQUIRED COMPONENTS SSL Crypto)
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/credentials.cpp
  ${CMAKE_CURRENT_LIST_DIR}/permissions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tls_socket.cpp)
target_link_libraries(spindle_runtime PRIVATE OpenSSL::SSL OpenSSL::Crypto)
