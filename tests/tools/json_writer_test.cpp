// The --json writer: escaping, numbers, nesting and commas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "json_writer.hpp"
#include "mini_json.hpp"

namespace infer::cli {
namespace {

TEST(JsonQuote, EscapesWhatJsonRequires) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("l1\nl2\t\r"), "\"l1\\nl2\\t\\r\"");
  EXPECT_EQ(json_quote(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(json_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(JsonWriter, NestedObjectsAndArrays) {
  JsonWriter json;
  json.begin_object();
  json.key("model").value("m.onnx");
  json.key("backends").begin_array().value("example").value("cpu").end_array();
  json.key("latency_ms").begin_object().key("p50").value(1.5).key("p90").value(2.0).end_object();
  json.key("iterations").value(50);
  json.key("empty").begin_array().end_array();
  json.key("ok").value(true);
  json.key("none").null();
  json.end_object();
  EXPECT_EQ(json.str(),
            "{\"model\":\"m.onnx\",\"backends\":[\"example\",\"cpu\"],\"latency_ms\":{\"p50\":1.5,\"p90\":2},"
            "\"iterations\":50,\"empty\":[],\"ok\":true,\"none\":null}");
}

TEST(JsonWriter, NumbersRoundTripAndNonFiniteIsNull) {
  JsonWriter json;
  json.begin_array()
      .value(0.1)
      .value(-1e-7)
      .value(int64_t{-42})
      .value(size_t{7})
      .value(std::numeric_limits<double>::infinity())
      .value(std::nan(""))
      .end_array();
  EXPECT_EQ(json.str(), "[0.1,-1e-07,-42,7,null,null]");
}

// The tests' JSON parser (used on infer-run's output elsewhere) reads what the writer
// wrote, and refuses what is not JSON.
TEST(MiniJson, ReadsTheWritersOutputAndRejectsInvalidText) {
  JsonWriter json;
  json.begin_object().key("s").value("a\"b\n").key("n").value(-2.5).key("a").begin_array().value(true).null().end_array();
  json.end_object();
  const std::optional<testing::JsonValue> value = testing::JsonParser::parse(json.str());
  ASSERT_TRUE(value.has_value());
  ASSERT_TRUE(value->is_object());
  EXPECT_EQ(value->get("s")->string, "a\"b\n");
  EXPECT_EQ(value->get("n")->number, -2.5);
  ASSERT_EQ(value->get("a")->array.size(), 2u);
  for (const char* bad : {"", "{", "{,}", "[1,]", "{\"a\":1}{}", "01", "\"x", "{\"a\" 1}", "tru", "1.", "-"}) {
    EXPECT_FALSE(testing::JsonParser::parse(bad).has_value()) << bad;
  }
  EXPECT_TRUE(testing::JsonParser::parse(" {\"a\": [1, 2e3, -0.5, \"\\u0041\"]}\n").has_value());
}

}  // namespace
}  // namespace infer::cli
