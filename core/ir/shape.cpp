// Shape helpers of the IR (see graph.hpp).
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace infer::ir {

bool Shape::is_static() const {
  if (!dims) return false;
  for (const Dim& d : *dims)
    if (!d.is_known()) return false;
  return true;
}

std::vector<int64_t> Shape::concrete() const {
  std::vector<int64_t> out;
  if (!dims) return out;
  out.reserve(dims->size());
  for (const Dim& d : *dims) out.push_back(d.is_known() ? d.value : -1);
  return out;
}

std::string Shape::to_string() const {
  // "[...]" rather than "[?]" for an unknown rank, because "[?]" already means "one
  // dimension of unknown size" and the two must not read alike in error messages.
  if (!dims) return "[...]";
  std::string out = "[";
  for (size_t i = 0; i < dims->size(); ++i) {
    if (i) out += ',';
    const Dim& d = (*dims)[i];
    if (d.is_known())
      out += std::to_string(d.value);
    else if (!d.param.empty())
      out += d.param;
    else
      out += '?';
  }
  out += ']';
  return out;
}

Shape Shape::of(const std::vector<int64_t>& values) {
  std::vector<Dim> out;
  out.reserve(values.size());
  for (int64_t v : values) out.push_back(v >= 0 ? Dim::known(v) : Dim{});
  return Shape{std::move(out)};
}

}  // namespace infer::ir
