#include "partitioner/move_reasons.hpp"

#include <cmath>
#include <cstdlib>

#include "partitioner/units.hpp"

namespace infer::partitioner {
namespace {

// Differences below this are rounding noise, not a saving or a cost.
constexpr double kNegligibleUs = 1e-6;

// The transfer part of a move, as a noun phrase: "a 3.1 MiB transfer (210.0 us)", "2
// copies (20.0 us)" when the bytes do not change, "transfers (3.0 us)" when neither the
// bytes nor the number of copies does (another link).
// `article` is "a" or "the" ("the" also goes before the other two forms).
std::string transfer_phrase(const MoveEstimate& e, const std::string& article = "a") {
  const int64_t bytes = std::llabs(e.bytes_before - e.bytes_after);
  const long copies =
      std::labs(static_cast<long>(e.copies_before) - static_cast<long>(e.copies_after));
  const std::string time = format_time_us(std::fabs(e.transfer_saved_us()));
  if (bytes > 0) return article + " " + format_bytes(bytes) + " transfer (" + time + ")";
  const std::string the = article == "the" ? "the " : "";
  if (copies > 0)
    return the + std::to_string(copies) + (copies == 1 ? " copy (" : " copies (") + time + ")";
  return the + "transfers (" + time + ")";
}

std::string time_of(double us) { return format_time_us(std::fabs(us)); }

}  // namespace

std::string island_phrase(const PlacementState& s, const std::vector<ir::NodeId>& nodes) {
  std::string ops;
  const size_t shown = std::min<size_t>(nodes.size(), 3);
  for (size_t i = 0; i < shown; ++i)
    ops += (i ? ", " : "") + s.graph().node(nodes[i]).op_type;
  if (nodes.size() > shown) ops += ", ...";
  return s.backend_name(s.backend_of(nodes.front())) + " island of " +
         std::to_string(nodes.size()) + (nodes.size() == 1 ? " node" : " nodes") + " (" + ops +
         ") under the minimum of " + std::to_string(s.options().min_island_nodes);
}

std::string moved_because(const MoveEstimate& e, const std::string& from) {
  const double t = e.transfer_saved_us();
  const double c = e.compute_saved_us();
  if (t > kNegligibleUs && c < -kNegligibleUs)
    return transfer_phrase(e) + " costs more than the " + time_of(c) + " it saves on " + from;
  if (t < -kNegligibleUs && c > kNegligibleUs)
    return "it saves " + time_of(c) + " of compute, more than " + transfer_phrase(e, "the") +
           " it adds";
  if (t > kNegligibleUs && c > kNegligibleUs)
    return "it saves " + transfer_phrase(e) + " and " + time_of(c) + " of compute";
  if (t > kNegligibleUs) return "it saves " + transfer_phrase(e);
  return "it saves " + time_of(c) + " of compute";
}

std::string kept_because(const MoveEstimate& e, const std::string& to, double min_gain_us) {
  const double t = e.transfer_saved_us();
  const double c = e.compute_saved_us();
  const std::string head = "moving to " + to;
  if (e.gain_us() > 0 && t >= -kNegligibleUs && c >= -kNegligibleUs)
    return head + " saves only " + time_of(e.gain_us()) + ", under the " +
           format_time_us(min_gain_us) + " a move must save";
  if (t > kNegligibleUs && c < -kNegligibleUs)
    return head + " saves " + transfer_phrase(e) + " but costs " + time_of(c) + " more compute";
  if (t < -kNegligibleUs && c > kNegligibleUs)
    return head + " saves " + time_of(c) + " but adds " + transfer_phrase(e);
  if (t < -kNegligibleUs && c < -kNegligibleUs)
    return head + " adds " + transfer_phrase(e) + " and " + time_of(c) + " of compute";
  if (t < -kNegligibleUs) return head + " adds " + transfer_phrase(e);
  if (c < -kNegligibleUs) return head + " costs " + time_of(c) + " more compute";
  return head + " saves nothing";
}

}  // namespace infer::partitioner
