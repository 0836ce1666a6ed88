// libFuzzer target for the request parser of `spindle status --http` (tools/spindle/http.hpp):
// any bytes get one well-formed answer — a status line of 200, 400, 404, 405 or 500 (a handler
// that throws), and a Content-Length that is the length of the body that follows — never a
// crash, a hang or an exception.
//
// Threading: single-threaded (libFuzzer's).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "http.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string request(reinterpret_cast<const char*>(data), size);
  const spindle_cli::HttpServer::Handler handler =
      [](const std::string& path) -> std::optional<spindle_cli::HttpResponse> {
    if (path == "/throw") throw std::runtime_error("handler failed");
    if (path == "/" || path == "/status.json")
      return spindle_cli::HttpResponse{200, "text/plain", "body of " + path};
    return std::nullopt;
  };
  const std::string answer = spindle_cli::http_answer(request, handler);
  if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) __builtin_trap();
  const std::string status = answer.substr(9, 3);
  if (status != "200" && status != "400" && status != "404" && status != "405" && status != "500")
    __builtin_trap();
  const auto head_end = answer.find("\r\n\r\n");
  const auto length = answer.find("\r\nContent-Length: ");
  if (head_end == std::string::npos || length == std::string::npos || length > head_end)
    __builtin_trap();
  const std::size_t declared = std::stoul(answer.substr(length + 18));
  const bool head = request.rfind("HEAD ", 0) == 0 && status == "200";
  if (answer.size() - head_end - 4 != (head ? 0 : declared)) __builtin_trap();
  return 0;
}
