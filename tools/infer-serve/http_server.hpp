// The HTTP/1.1 transport of infer-serve, on Boost.Beast: asynchronous, keep-alive,
// pipelined requests answered in order, a body size limit, and an idle timeout that
// closes connections of clients that stop sending. Everything the endpoints mean is in
// V2Router; this file only moves bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "infer/status.hpp"
#include "v2_routes.hpp"

namespace infer::serve {

struct HttpSettings {
  std::string host = "127.0.0.1";
  int port = 8000;                           // 0: any free port (see HttpServer::port)
  size_t max_body_bytes = size_t{64} << 20;  // larger requests get 413
  std::chrono::seconds idle_timeout{60};     // a connection silent this long is closed
  int io_threads = 1;
};

class HttpServer {
 public:
  // `state.pending` counts requests read and not yet answered, for the shutdown.
  HttpServer(HttpSettings settings, const V2Router& router, ServerState& state);
  ~HttpServer();
  // Binds and listens, then serves on io_threads threads. Fails naming the address when
  // it cannot bind (in use, no such address).
  Status start();
  int port() const;  // the bound port
  // Stops accepting and closes every connection; joins the threads. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infer::serve
