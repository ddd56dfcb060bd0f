#include "heldout.h"

#include <algorithm>
#include <fstream>

#include "dloop/base/json_schema.h"

namespace dloop::cli {

using base::Json;

std::string default_heldout_path() {
  return std::string(DLOOP_SOURCE_MODELS_DIR) + "/../tests/data/toolcall/heldout.jsonl";
}

namespace {

base::Status field_error(const std::string& where, const std::string& what) {
  return base::invalid_argument(where + ": " + what);
}

base::Result<std::string> string_field(const Json& obj, const char* key, const std::string& where) {
  const Json* v = obj.is_object() ? obj.find(key) : nullptr;
  if (!v || !v->is_string()) return field_error(where, std::string("'") + key + "' must be a string");
  return v->as_string();
}

}  // namespace

base::Result<std::vector<HeldoutTurn>> load_heldout(const std::string& path, int64_t limit, bool calls_only) {
  std::ifstream in(path);
  if (!in) return base::not_found(path + ": cannot open");
  std::vector<HeldoutTurn> out;
  std::string line;
  for (int64_t ln = 1; static_cast<int64_t>(out.size()) < limit && std::getline(in, line); ++ln) {
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(ln);
    auto j = Json::parse(line);
    if (!j.ok()) return field_error(where, j.status().message());
    const Json* gold = j->is_object() ? j->find("gold") : nullptr;
    const Json* msgs = j->is_object() ? j->find("messages") : nullptr;
    const Json* tools = j->is_object() ? j->find("tools") : nullptr;
    if (!gold || !gold->is_object()) return field_error(where, "'gold' must be an object");
    if (!msgs || !msgs->is_array()) return field_error(where, "'messages' must be an array");
    if (!tools || !tools->is_array()) return field_error(where, "'tools' must be an array");
    HeldoutTurn t;
    t.line = ln;
    if (const Json* call = gold->find("tool_call")) {
      if (!call->is_object() || !call->find("name") || !call->find("arguments")) {
        return field_error(where, "'gold.tool_call' needs 'name' and 'arguments'");
      }
      t.gold_call = *call;
    } else {
      DLOOP_ASSIGN_OR_RETURN(t.gold_answer, string_field(*gold, "content", where + ": gold"));
    }
    if (calls_only && !t.gold_call) continue;
    for (size_t i = 0; i < msgs->as_array().size(); ++i) {
      const Json& m = msgs->as_array()[i];
      const std::string w = where + ": messages[" + std::to_string(i) + "]";
      DLOOP_ASSIGN_OR_RETURN(std::string role, string_field(m, "role", w));
      DLOOP_ASSIGN_OR_RETURN(std::string content, string_field(m, "content", w));
      t.messages.push_back({std::move(role), std::move(content)});
    }
    for (size_t i = 0; i < tools->as_array().size(); ++i) {
      const Json& tj = tools->as_array()[i];
      const std::string w = where + ": tools[" + std::to_string(i) + "]";
      DLOOP_ASSIGN_OR_RETURN(std::string name, string_field(tj, "name", w));
      const Json* desc = tj.find("description");
      const Json* params = tj.find("parameters");
      if (!params || !params->is_object()) return field_error(w, "'parameters' must be an object");
      t.tools.push_back({std::move(name), desc && desc->is_string() ? desc->as_string() : "", *params});
      t.tool_json.push_back(tj);
    }
    out.push_back(std::move(t));
  }
  return out;
}

CallMatch match_call(const HeldoutTurn& turn, const std::string& name, const Json& arguments) {
  CallMatch m;
  for (const auto& tool : turn.tools) {
    if (tool.name != name) continue;
    auto schema = base::Schema::compile(tool.parameters);
    m.valid = schema.ok() && schema->validate(arguments).ok();
  }
  if (!turn.gold_call) return m;
  const Json* gname = turn.gold_call->find("name");
  m.name = gname && gname->is_string() && gname->as_string() == name;
  m.exact = m.name && arguments == *turn.gold_call->find("arguments");
  return m;
}

FreeCall read_free_call(const engine::Engine& engine, const std::vector<int32_t>& tokens) {
  FreeCall f;
  auto open = engine.tokenizer().find_special("<tool_call>");
  auto close = engine.tokenizer().find_special("</tool_call>");
  if (!open || tokens.empty() || tokens[0] != *open) return f;
  f.started = true;
  auto end = close ? std::find(tokens.begin(), tokens.end(), *close) : tokens.end();
  std::vector<int32_t> body(tokens.begin() + 1, end);
  auto j = Json::parse(engine.tokenizer().decode(body, false));
  if (!j.ok() || !j->is_object()) return f;
  const Json* name = j->find("name");
  const Json* args = j->find("arguments");
  if (!name || !name->is_string() || !args || !args->is_object()) return f;
  f.parsed = true;
  f.name = name->as_string();
  f.arguments = *args;
  return f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace dloop::cli
