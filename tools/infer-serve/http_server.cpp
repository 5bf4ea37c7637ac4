#include "http_server.hpp"

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <optional>
#include <thread>
#include <vector>

namespace infer::serve {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// One client connection: reads a request, has the router answer it, writes the answer,
// and reads the next (requests pipelined behind it wait in the buffer, so answers go
// out in request order).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const HttpSettings& settings, const V2Router& router,
             ServerState& state)
      : stream_(std::move(socket)), settings_(settings), router_(router), state_(state) {}

  void start() {
    // Reads are as large as the buffer's free room: without this, each recv brought 512
    // bytes, and a 600 KB request took 10 ms to read.
    buffer_.reserve(64 * 1024);
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  // Reads the next request piece by piece: the idle timeout restarts with every piece,
  // so a slow but steady client is served and only a silent one is dropped.
  void read() {
    parser_.emplace();
    parser_->body_limit(settings_.max_body_bytes);
    parser_->header_limit(64 * 1024);
    continue_sent_ = false;
    head_ = false;
    read_some();
  }

  void read_some() {
    stream_.expires_after(settings_.idle_timeout);
    http::async_read_some(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read_some(ec); });
  }

  void on_read_some(beast::error_code ec) {
    if (ec) return on_read(ec);
    if (parser_->is_done()) return on_read(ec);
    // A client that sent "Expect: 100-continue" waits for this before sending the body
    // (curl does for bodies over 1 MiB).
    if (parser_->is_header_done() && !continue_sent_) {
      continue_sent_ = true;
      const auto expect = parser_->get().find(http::field::expect);
      if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue")) {
        auto interim =
            std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
        stream_.expires_after(settings_.idle_timeout);
        return http::async_write(stream_, *interim,
                                 [self = shared_from_this(), interim](beast::error_code e, size_t) {
                                   if (e) return self->close();
                                   self->read_some();
                                 });
      }
    }
    read_some();
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::eof) {
      return close();
    }
    if (ec == http::error::body_limit) {
      return send_error(413,
                        "the request body exceeds the server's limit of " +
                            std::to_string(settings_.max_body_bytes) +
                            " bytes (server.max_request_mb)",
                        false);
    }
    if (ec) {
      // A malformed request leaves the stream at an unknown position: answer and close.
      if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
        return send_error(400, "malformed HTTP request: " + ec.message(), false);
      }
      return close();
    }
    http::request<http::string_body> request = parser_->release();
    keep_alive_ = request.keep_alive();
    std::optional<size_t> header_length;
    if (const auto it = request.find("Inference-Header-Content-Length"); it != request.end()) {
      size_t n = 0;
      const std::string_view v = it->value();
      const auto [end, err] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (err != std::errc() || end != v.data() + v.size()) {
        return send_error(
            400,
            "Inference-Header-Content-Length must be a byte count, got '" + std::string(v) + "'",
            keep_alive_);
      }
      header_length = n;
    }
    auto body = std::make_shared<std::string>(std::move(request.body()));
    state_.pending.fetch_add(1);
    answering_ = true;
    // HEAD is GET without the body (RFC 9110 9.3.2): routed as GET, answered with the
    // headers only.
    head_ = request.method() == http::verb::head;
    const std::string method = head_ ? std::string("GET") : std::string(request.method_string());
    const std::string target(request.target());
    router_.handle(method, target, header_length, std::move(body),
                   [self = shared_from_this()](HttpReply reply) {
                     // The router answers on this thread (a request run at once, or refused)
                     // or on a model's worker thread: the write happens on this connection's
                     // strand, at once when already there.
                     net::dispatch(self->stream_.get_executor(),
                                   [self, reply = std::move(reply)]() mutable {
                                     self->send(std::move(reply), self->keep_alive_);
                                   });
                   });
  }

  void send_error(int status, const std::string& message, bool keep_alive) {
    HttpReply reply;
    reply.status = status;
    reply.body = error_body(message);
    send(std::move(reply), keep_alive);
  }

  void send(HttpReply reply, bool keep_alive) {
    response_.emplace();
    response_->result(static_cast<unsigned>(reply.status));
    response_->version(11);
    response_->set(http::field::server, "infer-serve");
    response_->set(http::field::content_type, reply.content_type);
    if (reply.header_length)
      response_->set("Inference-Header-Content-Length", std::to_string(*reply.header_length));
    if (!reply.allow.empty()) response_->set(http::field::allow, reply.allow);
    response_->keep_alive(keep_alive);
    if (head_) {
      response_->content_length(reply.body.size());
    } else {
      response_->body() = std::move(reply.body);
      response_->prepare_payload();
    }
    stream_.expires_after(settings_.idle_timeout);
    http::async_write(stream_, *response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (self->answering_) {
                          self->answering_ = false;
                          self->state_.pending.fetch_sub(1);
                        }
                        if (ec) return self->close();
                        if (!keep_alive) return self->linger();
                        self->read();
                      });
  }

  // Closing with unread request bytes in the socket makes the kernel reset the
  // connection, and the client may lose the answer just written (a 413, a 400). So the
  // sending side is shut first, and what the client still sends is read and dropped
  // until it closes or a few seconds pass (RFC 9112 9.6).
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(5));
    drain_buffer_ = std::make_shared<std::array<char, 16384>>();
    drain();
  }

  void drain() {
    stream_.async_read_some(net::buffer(*drain_buffer_),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->close();
                              self->drain();
                            });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  const HttpSettings& settings_;
  const V2Router& router_;
  ServerState& state_;
  bool answering_ = false;  // a request was handed to the router and is counted in pending
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  bool keep_alive_ = true;
  bool head_ = false;           // the request being answered is a HEAD
  bool continue_sent_ = false;  // the 100-continue check ran for this request
  std::shared_ptr<std::array<char, 16384>> drain_buffer_;
};

}  // namespace

// One io_context per thread, each run by that thread alone, and connections dealt out
// round-robin: a connection's handlers never change threads, and the threads share no
// scheduler lock (one io_context run by several threads made them wake each other on
// every completion, which cost more than parsing the request).
struct HttpServer::Impl {
  Impl(HttpSettings s, const V2Router& r, ServerState& st)
      : settings(std::move(s)), router(r), state(st) {
    const int n = std::max(1, settings.io_threads);
    for (int i = 0; i < n; ++i) contexts.push_back(std::make_unique<net::io_context>(1));
    acceptor.emplace(*contexts.front());
  }

  void accept() {
    net::io_context& next = *contexts[next_context++ % contexts.size()];
    acceptor->async_accept(next, [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
      } else {
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::make_shared<Connection>(std::move(socket), settings, router, state)->start();
      }
      accept();
    });
  }

  HttpSettings settings;
  const V2Router& router;
  ServerState& state;
  std::vector<std::unique_ptr<net::io_context>> contexts;
  size_t next_context = 0;  // only the acceptor's thread uses it
  std::optional<tcp::acceptor> acceptor;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  bool stopped = false;
};

HttpServer::HttpServer(HttpSettings settings, const V2Router& router, ServerState& state)
    : impl_(std::make_unique<Impl>(std::move(settings), router, state)) {}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start() {
  Impl& s = *impl_;
  const std::string where =
      "HTTP address " + s.settings.host + ":" + std::to_string(s.settings.port);
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(s.settings.host, ec);
  if (ec) return invalid_argument(where + ": '" + s.settings.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(s.settings.port));
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return unavailable("cannot listen on " + where + ": " + ec.message());
  for (auto& context : s.contexts) s.work.push_back(net::make_work_guard(*context));
  s.accept();
  for (auto& context : s.contexts) s.threads.emplace_back([c = context.get()] { c->run(); });
  return Status::ok();
}

int HttpServer::port() const {
  beast::error_code ec;
  const tcp::endpoint endpoint = impl_->acceptor->local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  net::post(*s.contexts.front(), [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
  });
  s.work.clear();
  for (auto& context : s.contexts) context->stop();
  for (std::thread& t : s.threads) t.join();
}

}  // namespace infer::serve
