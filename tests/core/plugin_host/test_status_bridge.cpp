#include <gtest/gtest.h>

#include "plugin_host/status_bridge.hpp"

namespace infer::host {
namespace {

TEST(StatusBridge, NullIsOk) {
  infer_status_code raw = INFER_STATUS_INTERNAL;
  Status s = take_status(nullptr, "ctx", &raw);
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(raw, INFER_STATUS_OK);
}

TEST(StatusBridge, MapsEveryAbiCode) {
  struct Case {
    infer_status_code abi;
    StatusCode core;
  };
  const Case cases[] = {
      {INFER_STATUS_INVALID_ARGUMENT, StatusCode::kInvalidArgument},
      {INFER_STATUS_UNSUPPORTED, StatusCode::kUnsupported},
      {INFER_STATUS_UNAVAILABLE, StatusCode::kUnavailable},
      {INFER_STATUS_OUT_OF_MEMORY, StatusCode::kUnavailable},
      {INFER_STATUS_CANCELLED, StatusCode::kCancelled},
      {INFER_STATUS_TIMEOUT, StatusCode::kUnavailable},
      {INFER_STATUS_INTERNAL, StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    infer_status_code raw = INFER_STATUS_OK;
    Status s = take_status(make_status(c.abi, "boom"), "", &raw);
    EXPECT_EQ(s.code(), c.core) << abi_code_name(c.abi);
    EXPECT_EQ(raw, c.abi);
  }
  EXPECT_EQ(to_status_code(static_cast<infer_status_code>(99)), StatusCode::kInternal);
}

TEST(StatusBridge, TakeStatusPrefixesContextAndKeepsMessage) {
  Status s = take_status(make_status(INFER_STATUS_UNSUPPORTED, "op Foo"), "plugin 'x': compile");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "plugin 'x': compile: op Foo");
}

TEST(StatusBridge, OutOfMemoryAndTimeoutKeepTheirNameInTheMessage) {
  EXPECT_EQ(take_status(make_status(INFER_STATUS_OUT_OF_MEMORY, "1 GiB")).message(),
            "OUT_OF_MEMORY: 1 GiB");
  EXPECT_EQ(take_status(make_status(INFER_STATUS_TIMEOUT, "slow")).message(), "TIMEOUT: slow");
}

TEST(StatusBridge, StatusObjectWithCodeOkIsAPluginBug) {
  auto* s = new infer_status;
  s->code = INFER_STATUS_OK;
  s->message = "all good?";
  Status st = take_status(s);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("all good?"), std::string::npos);
}

TEST(StatusBridge, MakeStatusFromCoreStatus) {
  EXPECT_EQ(make_status(Status::ok()), nullptr);
  EXPECT_EQ(make_status(INFER_STATUS_OK, "ignored"), nullptr);
  infer_status* s = make_status(not_found("no input 'x'"));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(s->message, "no input 'x'");
  free_status(s);
  s = make_status(unavailable("gone"));
  EXPECT_EQ(s->code, INFER_STATUS_UNAVAILABLE);
  free_status(s);
  free_status(nullptr);
}

TEST(StatusBridge, ViewStatusDoesNotFree) {
  infer_status* s = make_status(INFER_STATUS_CANCELLED, "stop");
  Status a = view_status(s, "event");
  Status b = view_status(s);
  EXPECT_EQ(a.code(), StatusCode::kCancelled);
  EXPECT_EQ(a.message(), "event: stop");
  EXPECT_EQ(b.message(), "stop");
  free_status(s);
}

}  // namespace
}  // namespace infer::host
