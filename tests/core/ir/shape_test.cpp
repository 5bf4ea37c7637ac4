// Shape and Dim helpers.
#include <gtest/gtest.h>

#include "ir/graph.hpp"

namespace infer::ir {
namespace {

TEST(Shape, ToStringShowsKnownSymbolicAndUnknownDims) {
  Shape s{std::vector<Dim>{Dim::symbol("batch"), Dim::known(1), Dim::known(8), Dim{}}};
  EXPECT_EQ(s.to_string(), "[batch,1,8,?]");
}

TEST(Shape, ToStringOfScalarAndUnknownRank) {
  EXPECT_EQ(Shape{std::vector<Dim>{}}.to_string(), "[]");
  EXPECT_EQ(Shape{}.to_string(), "[...]");
  EXPECT_EQ(Shape{std::vector<Dim>{Dim{}}}.to_string(), "[?]");
}

TEST(Shape, IsStaticNeedsRankAndEveryDim) {
  EXPECT_TRUE(Shape::of({2, 3}).is_static());
  EXPECT_TRUE(Shape{std::vector<Dim>{}}.is_static());  // a scalar
  EXPECT_FALSE(Shape{}.is_static());
  EXPECT_FALSE((Shape{std::vector<Dim>{Dim::symbol("n"), Dim::known(3)}}.is_static()));
  EXPECT_FALSE(Shape::of({2, -1}).is_static());
}

TEST(Shape, OfTurnsNegativeValuesIntoUnknownDims) {
  Shape s = Shape::of({4, -1, 0});
  ASSERT_TRUE(s.rank_known());
  ASSERT_EQ(s.rank(), 3u);
  EXPECT_EQ((*s.dims)[0], Dim::known(4));
  EXPECT_FALSE((*s.dims)[1].is_known());
  EXPECT_TRUE((*s.dims)[1].param.empty());
  EXPECT_EQ((*s.dims)[2], Dim::known(0));
}

TEST(Shape, ConcreteUsesMinusOneForAnyUnknownDim) {
  Shape s{std::vector<Dim>{Dim::symbol("b"), Dim::known(5), Dim{}}};
  EXPECT_EQ(s.concrete(), (std::vector<int64_t>{-1, 5, -1}));
  EXPECT_TRUE(Shape{}.concrete().empty());
  EXPECT_EQ(Shape{}.rank(), 0u);
}

TEST(Shape, Equality) {
  EXPECT_EQ(Shape::of({1, 2}), Shape::of({1, 2}));
  EXPECT_NE(Shape::of({1, 2}), Shape::of({2, 1}));
  EXPECT_NE(Shape{}, Shape{std::vector<Dim>{}});
  EXPECT_NE(Dim::symbol("a"), Dim::symbol("b"));
}

}  // namespace
}  // namespace infer::ir
