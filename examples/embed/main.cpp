// Embedding dloop in a C++ program: open the model, make a schema-guided tool call, ask for a
// JSON answer, then run a workflow file and print its events as they are committed.
//   embed MODEL.gguf WORKFLOW.yaml [DB]
// Exit 0 when all three worked, 1 otherwise.
#include <cstdio>
#include <string>

#include <dloop/dloop.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.gguf WORKFLOW.yaml [DB]\n", argv[0]);
    return 2;
  }
  std::printf("libdloop %s\n", dloop::version());
  std::string error;
  std::unique_ptr<dloop::Model> model = dloop::Model::open(argv[1], &error);
  if (!model) {
    std::fprintf(stderr, "open: %s\n", error.c_str());
    return 1;
  }

  dloop::Tool weather{"get_weather", "Get the current weather for a city.",
                      R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"};
  dloop::ToolCallOptions call_options;
  call_options.tool_choice = "required";
  dloop::ToolCallResult call = model->tool_call({{"user", "What is the weather in Paris?"}}, {weather}, call_options);
  if (!call.ok || !call.is_call) {
    std::fprintf(stderr, "tool_call: %s\n", call.ok ? "no call" : call.error.c_str());
    return 1;
  }
  std::printf("tool call: %s %s (%lld forward passes)\n", call.name.c_str(), call.arguments_json.c_str(),
              static_cast<long long>(call.forward_passes));

  dloop::ChatOptions chat_options;
  chat_options.response_schema_json =
      R"({"type":"object","properties":{"answer":{"type":"string"},"sure":{"type":"boolean"}},"required":["answer","sure"]})";
  dloop::ChatResult chat = model->chat(
      {{"user", "What is the weather in Paris?"},
       {"assistant", dloop::tool_call_text(call.name, call.arguments_json)},
       {"tool", R"({"temperature_c": 21, "sky": "clear"})"}},
      chat_options);
  if (!chat.ok) {
    std::fprintf(stderr, "chat: %s\n", chat.error.c_str());
    return 1;
  }
  std::printf("json answer: %s\n", chat.text.c_str());

  dloop::RunOptions run;
  run.workflow_path = argv[2];
  run.inputs_json = R"({"a": 6, "b": 7})";
  run.db_path = argc > 3 ? argv[3] : "embed.db";
  run.model = model.get();
  run.on_event = [](const dloop::Event& e) {
    std::printf("event %lld %s %s\n", static_cast<long long>(e.seq), e.type.c_str(), e.step_path.c_str());
  };
  dloop::RunResult result = dloop::run_workflow(run);
  if (!result.ok) {
    std::fprintf(stderr, "run %s: %s\n", result.run_id.c_str(), result.error.c_str());
    return 1;
  }
  std::printf("run %s %s: %s\n", result.run_id.c_str(), result.status.c_str(), result.outputs_json.c_str());
  return 0;
}
