// The public entry points: file access, YAML parsing and the exception boundary. yaml-cpp
// reports errors by throwing, and the core's public API never throws, so every call into
// it happens under guarded() below.
#include "config/deployment_config.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <system_error>
#include <vector>

#include "config/deployment_schema.hpp"
#include "config/schema_reader.hpp"

namespace infer::config {
namespace {

namespace fs = std::filesystem;

std::string location(const std::string& source, const YAML::Mark& mark) {
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1);
}

// Runs `body` and turns anything it throws into a Status. YAML errors are the user's
// input; anything else is either memory running out or a bug here.
template <typename Body>
Result<DeploymentConfig> guarded(const std::string& source, Body&& body) {
  try {
    return body();
  } catch (const YAML::ParserException& e) {
    return invalid_argument(location(source, e.mark) + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return invalid_argument(location(source, e.mark) + ": YAML error: " + e.msg);
  } catch (const std::bad_alloc&) {
    return unavailable(source + ": out of memory while reading the deployment file");
  } catch (const std::exception& e) {
    return internal_error(source + ": unexpected error while reading the deployment file: " + e.what());
  } catch (...) {
    return internal_error(source + ": unexpected non-standard exception while reading the deployment file");
  }
}

// Records where each document the parser reports starts, and where its first node is.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;  // the document (its '---' when written)
  std::vector<YAML::Mark> roots;   // its first node

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark) {
    if (roots.size() < starts.size()) roots.push_back(mark);
  }
};

Result<DeploymentConfig> parse_unguarded(const std::string& yaml_text, const std::string& source,
                                         const std::string& base_dir) {
  // The documents are counted by a parser of our own, at most two, not by YAML::LoadAll:
  // on a ',' outside [] or {} yaml-cpp 0.7 reports an empty document without consuming
  // anything, again and again, so LoadAll never returns and allocates until memory runs
  // out (found by tests/fuzz; regressions/deployment_config/ replays it). A document
  // that starts where the previous one did is that case, reported as the syntax error
  // it is.
  DocumentStarts documents;
  {
    std::istringstream in(yaml_text);
    YAML::Parser parser(in);
    while (documents.starts.size() < 2 && parser.HandleNextDocument(documents)) {
    }
  }
  // An empty file (or one holding only comments) is a valid deployment with every key
  // left at its default.
  if (documents.starts.empty()) return DeploymentConfig{};

  const detail::SchemaReader reader(source, base_dir);
  if (documents.starts.size() > 1) {
    const YAML::Mark& first = documents.starts[0];
    const YAML::Mark& second = documents.starts[1];
    if (second.pos <= first.pos) {
      const size_t at = static_cast<size_t>(std::max(second.pos, 0));
      const std::string what = at < yaml_text.size() ? "'" + yaml_text.substr(at, 1) + "'" : "end of file";
      return invalid_argument(location(source, second) + ": YAML syntax error: unexpected " + what +
                              " (a ',' outside [] or {}?)");
    }
    // A second document would otherwise be ignored without a word.
    const YAML::Mark& at = documents.roots.size() > 1 ? documents.roots[1] : second;
    return reader.error(at.line + 1, "found a second YAML document; a deployment file holds exactly one");
  }
  return detail::read_deployment(reader, reader.root(YAML::Load(yaml_text)));
}

Result<std::string> read_text_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return not_found("deployment file '" + path + "' not found");
  if (ec) return unavailable("cannot access deployment file '" + path + "': " + ec.message());
  if (fs::is_directory(status)) return invalid_argument("deployment file '" + path + "' is a folder, not a file");

  std::ifstream in(path, std::ios::binary);
  if (!in) return unavailable("cannot open deployment file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return unavailable("cannot read deployment file '" + path + "': " + std::strerror(errno));
  return text.str();
}

}  // namespace

Result<DeploymentConfig> parse_config(const std::string& yaml_text, const std::string& source_name,
                                      const std::string& base_dir) {
  const std::string source = source_name.empty() ? "<string>" : source_name;
  return guarded(source, [&] { return parse_unguarded(yaml_text, source, base_dir); });
}

Result<DeploymentConfig> load_config_file(const std::string& path) {
  return guarded(path, [&]() -> Result<DeploymentConfig> {
    INFER_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
    INFER_ASSIGN_OR_RETURN(DeploymentConfig config, parse_unguarded(text, path, fs::path(path).parent_path().string()));
    config.source = path;
    return config;
  });
}

}  // namespace infer::config
