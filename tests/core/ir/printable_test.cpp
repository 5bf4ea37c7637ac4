// infer/printable.hpp, Status's use of it and Node::describe(): bytes from files reach
// messages escaped. Expected strings are written out by hand from the UTF-8 rules
// (RFC 3629, table 3-7 of the Unicode standard).
#include <gtest/gtest.h>

#include <string>

#include "infer/printable.hpp"
#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer {
namespace {

TEST(Printable, KeepsValidUtf8AndPrintableAscii) {
  EXPECT_EQ(printable(""), "");
  EXPECT_EQ(printable("conv1/Relu:0 [a-z] 'x'"), "conv1/Relu:0 [a-z] 'x'");
  // 2-, 3- and 4-byte sequences at the edges of their ranges.
  const std::string valid = "\xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80 \xEF\xBF\xBF"
                            " \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF \xC3\xA9t\xC3\xA9 \xE6\x97\xA5";
  EXPECT_EQ(printable(valid), valid);
  EXPECT_TRUE(is_printable(valid));
}

TEST(Printable, EscapesControlBytes) {
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x1B[31mred\t\r\x7F"), "\\x1B[31mred\\x09\\x0D\\x7F");
  EXPECT_EQ(printable("two\nlines"), "two\\x0Alines");
  EXPECT_EQ(printable("two\nlines", /*keep_newlines=*/true), "two\nlines");
  EXPECT_FALSE(is_printable("two\nlines"));
  EXPECT_TRUE(is_printable("two\nlines", true));
}

TEST(Printable, EscapesEveryByteOfAnInvalidSequence) {
  EXPECT_EQ(printable("\xFF"), "\\xFF");
  EXPECT_EQ(printable("\x80x"), "\\x80x");                  // stray continuation byte
  EXPECT_EQ(printable("\xC0\xAF"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(printable("\xC1\xBF"), "\\xC1\\xBF");           // overlong
  EXPECT_EQ(printable("\xE0\x80\xAF"), "\\xE0\\x80\\xAF");  // overlong 3-byte
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // UTF-16 surrogate U+D800
  EXPECT_EQ(printable("\xF0\x80\x80\xAF"), "\\xF0\\x80\\x80\\xAF");  // overlong 4-byte
  EXPECT_EQ(printable("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xF5\x80"), "\\xF5\\x80");
  EXPECT_EQ(printable("ab\xC3"), "ab\\xC3");                // cut short at the end
  EXPECT_EQ(printable("\xE6\x97("), "\\xE6\\x97(");         // cut short by ASCII
  EXPECT_EQ(printable("\xC3(\xC3\xA9"), "\\xC3(\xC3\xA9");  // resynchronizes
}

TEST(Printable, StatusMessagesAreMadePrintableButKeepTheirLines) {
  const Status s = invalid_argument("node 'a\xFF\x1B' failed:\n  line two");
  EXPECT_EQ(s.message(), "node 'a\\xFF\\x1B' failed:\n  line two");
  EXPECT_EQ(s.with_context("loading 'm\x01.onnx'").message(),
            "loading 'm\\x01.onnx': node 'a\\xFF\\x1B' failed:\n  line two");
  const Status clean = not_found("input 'image' (\xC3\xA9)");
  EXPECT_EQ(clean.message(), "input 'image' (\xC3\xA9)");
}

TEST(Printable, NodeDescribeEscapesNameAndOpIncludingNewlines) {
  ir::Node node;
  node.name = "bad\xFF\nname";
  node.op_type = "Foo\x07";
  node.domain = "com.acme";
  EXPECT_EQ(node.describe(), "node 'bad\\xFF\\x0Aname' (com.acme:Foo\\x07)");
}

}  // namespace
}  // namespace infer
