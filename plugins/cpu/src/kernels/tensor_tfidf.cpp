// TfIdfVectorizer over int32/int64 tokens (string pools are not supported: strings never
// reach a plugin). The n-gram pool is turned into a trie once at compile time; each input
// row is scanned for n-grams of min..max_gram_length tokens whose items are `skip + 1`
// apart, for every skip up to max_skip_count (unigrams are counted in the first pass
// only), which is the counting ONNX Runtime does. The counts become TF, IDF (weight where
// the count is non-zero) or TFIDF (count times weight), weights default to 1.
#include <algorithm>
#include <map>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

enum class TfIdfMode { kTF, kIDF, kTFIDF };

struct TrieNode {
  std::map<int64_t, size_t> next;  // token -> child node
  int64_t output = -1;             // output index of the n-gram ending here, -1: none
};

struct TfIdfParams {
  TfIdfMode mode = TfIdfMode::kTF;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  int64_t output_size = 0;
  std::vector<float> weights;
  std::vector<TrieNode> trie;  // trie[0] is the root
};

Result<TfIdfParams> parse(const infer_node_view& n) {
  TfIdfParams p;
  const std::string mode = attr_s(n, "mode", "");
  if (mode == "TF")
    p.mode = TfIdfMode::kTF;
  else if (mode == "IDF")
    p.mode = TfIdfMode::kIDF;
  else if (mode == "TFIDF")
    p.mode = TfIdfMode::kTFIDF;
  else
    return unsupported("TfIdfVectorizer mode '", mode, "' is not TF, IDF or TFIDF");
  p.min_gram = attr_i(n, "min_gram_length", 0);
  p.max_gram = attr_i(n, "max_gram_length", 0);
  p.max_skip = attr_i(n, "max_skip_count", 0);
  if (p.min_gram < 1 || p.max_gram < p.min_gram || p.max_gram > (1 << 20) || p.max_skip < 0 ||
      p.max_skip > (1 << 20))
    return unsupported(
        "TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length and "
        "max_skip_count >= 0, got ",
        p.min_gram, ", ", p.max_gram, ", ", p.max_skip);
  if (has_attr(n, "pool_strings")) return unsupported("TfIdfVectorizer pool_strings not supported");
  const std::vector<int64_t> pool = attr_ints(n, "pool_int64s");
  const std::vector<int64_t> counts = attr_ints(n, "ngram_counts");
  const std::vector<int64_t> indexes = attr_ints(n, "ngram_indexes");
  for (double w : attr_floats(n, "weights")) p.weights.push_back(static_cast<float>(w));
  for (int64_t i : indexes) {
    if (i < 0 || i > (int64_t{1} << 30))
      return unsupported("TfIdfVectorizer ngram_indexes value ", i, " is out of range");
    p.output_size = std::max(p.output_size, i + 1);
  }
  if (!p.weights.empty() && static_cast<int64_t>(p.weights.size()) < p.output_size)
    return unsupported("TfIdfVectorizer has ", p.weights.size(), " weights for ", p.output_size,
                       " outputs");
  p.trie.emplace_back();
  size_t ngram = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const auto size = static_cast<int64_t>(level + 1);
    const int64_t begin = counts[level];
    const int64_t end =
        level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % size != 0)
      return unsupported("TfIdfVectorizer ngram_counts ", dims_str(counts),
                         " do not split the pool of ", pool.size(), " into whole ", size, "-grams");
    for (int64_t at = begin; at < end; at += size) {
      if (ngram >= indexes.size())
        return unsupported("TfIdfVectorizer has more n-grams than ngram_indexes (", indexes.size(),
                           ")");
      size_t node = 0;
      for (int64_t j = 0; j < size; ++j) {
        const int64_t token = pool[static_cast<size_t>(at + j)];
        auto it = p.trie[node].next.find(token);
        if (it == p.trie[node].next.end()) {
          p.trie.emplace_back();
          it = p.trie[node].next.emplace(token, p.trie.size() - 1).first;
        }
        node = it->second;
      }
      p.trie[node].output = indexes[ngram++];
    }
  }
  return p;
}

class TfIdfKernel final : public Kernel {
 public:
  explicit TfIdfKernel(TfIdfParams p) : p_(std::move(p)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() != 1 && X.rank() != 2)
      return invalid("input ", dims_str(X.dims), " must be 1-D [C] or 2-D [N, C]");
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, read_indices(X, "input"));
    const int64_t rows = X.rank() == 1 ? 1 : X.dims[0];
    const int64_t len = X.dims.back();
    const Dims out = X.rank() == 1 ? Dims{p_.output_size} : Dims{rows, p_.output_size};
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, out));
    std::vector<int64_t> freq(static_cast<size_t>(p_.output_size));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(freq.begin(), freq.end(), 0);
      count_row(tokens.data() + r * len, len, freq);
      float* y = Y->mut<float>() + r * p_.output_size;
      for (int64_t i = 0; i < p_.output_size; ++i) {
        const float w = p_.weights.empty() ? 1.0f : p_.weights[i];
        const auto f = static_cast<float>(freq[i]);
        switch (p_.mode) {
          case TfIdfMode::kTF:
            y[i] = f;
            break;
          case TfIdfMode::kIDF:
            y[i] = freq[i] > 0 ? w : 0.0f;
            break;
          case TfIdfMode::kTFIDF:
            y[i] = f * w;
            break;
        }
      }
    }
    return Status::ok();
  }

 private:
  void count_row(const int64_t* row, int64_t len, std::vector<int64_t>& freq) const {
    int64_t start_size = p_.min_gram;
    for (int64_t dist = 1; dist <= p_.max_skip + 1; ++dist) {
      for (int64_t start = 0; start < len; ++start) {
        // No n-gram of the smallest counted size fits from here on.
        if (start + dist * (start_size - 1) >= len) break;
        size_t node = 0;
        int64_t at = start;
        for (int64_t size = 1; size <= p_.max_gram && at < len; ++size, at += dist) {
          const auto it = p_.trie[node].next.find(row[at]);
          if (it == p_.trie[node].next.end()) break;
          node = it->second;
          if (size >= start_size && p_.trie[node].output >= 0) ++freq[p_.trie[node].output];
        }
      }
      // Unigrams do not depend on the skip: count them in the first pass only.
      if (start_size == 1) {
        if (++start_size > p_.max_gram) break;
      }
    }
  }

  TfIdfParams p_;
};

}  // namespace

Status tfidf_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kInts, "the input"));
  return parse(node).status();
}

Result<KernelPtr> tfidf_create(const KernelInit& init) {
  CPU_ASSIGN_OR_RETURN(TfIdfParams p, parse(*init.node));
  return KernelPtr(new TfIdfKernel(std::move(p)));
}

}  // namespace infer::cpu::kernels
