// Drives `dloop serve` with the official openai npm client, as an application would.
//   node openai_e2e.mjs BASE_URL MODULE_DIR
// MODULE_DIR is the npm prefix where `openai` is installed (the test installs it). Checks
// protocol shapes and behaviour, never the model's exact words (the bundled model is retrained
// from time to time). Prints one "ok - NAME" line per check; exits 1 at the first failure.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const [baseURL, moduleDir] = process.argv.slice(2);
const require = createRequire(moduleDir.endsWith('/') ? moduleDir : moduleDir + '/');
const OpenAI = require('openai');
const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey: 'unused-on-loopback', maxRetries: 0, timeout: 120000 });
const model = 'default';

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather for a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
  },
};
const timeTool = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'Get the local time in a timezone.',
    parameters: { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'] },
  },
};

function checkUsage(usage) {
  assert.equal(typeof usage.prompt_tokens, 'number');
  assert.ok(usage.prompt_tokens > 0);
  assert.equal(typeof usage.completion_tokens, 'number');
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.equal(usage.completion_tokens_details.reasoning_tokens, 0);
  assert.equal(usage.prompt_tokens_details.cached_tokens, 0);
}

function checkCompletion(c) {
  assert.match(c.id, /^chatcmpl-/);
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.model, model);
  assert.equal(typeof c.created, 'number');
  assert.equal(c.choices.length, 1);
  assert.equal(c.choices[0].index, 0);
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.equal(c.choices[0].logprobs, null);
  checkUsage(c.usage);
}

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('models list and retrieve', async () => {
  const list = await client.models.list();
  const ids = [];
  for await (const m of list) ids.push(m.id);
  assert.deepEqual(ids, [model]);
  const m = await client.models.retrieve(model);
  assert.equal(m.id, model);
  assert.equal(m.object, 'model');
  assert.equal(m.owned_by, 'dloop');
});

check('plain chat', async () => {
  const c = await client.chat.completions.create({
    model,
    messages: [{ role: 'developer', content: 'You are terse.' }, { role: 'user', content: 'Say hello to Ada.' }],
    max_completion_tokens: 32,
    seed: 7,
    reasoning_effort: 'low',
  });
  checkCompletion(c);
  assert.equal(typeof c.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(c.choices[0].finish_reason), c.choices[0].finish_reason);
  assert.equal(c.choices[0].message.tool_calls, undefined);
  assert.ok(c.usage.completion_tokens <= 32);
});

check('tool call round trip', async () => {
  const messages = [{ role: 'user', content: 'What is the weather in Paris right now?' }];
  const first = await client.chat.completions.create({
    model, messages, tools: [weatherTool, timeTool], tool_choice: 'required', parallel_tool_calls: false,
  });
  checkCompletion(first);
  const choice = first.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  assert.match(call.id, /^call_/);
  assert.equal(call.type, 'function');
  assert.ok(['get_weather', 'get_time'].includes(call.function.name), call.function.name);
  const args = JSON.parse(call.function.arguments);  // valid JSON for the chosen tool's schema
  if (call.function.name === 'get_weather') {
    assert.equal(typeof args.city, 'string');
    for (const k of Object.keys(args)) assert.ok(['city', 'unit'].includes(k), k);
    if ('unit' in args) assert.ok(['celsius', 'fahrenheit'].includes(args.unit));
  } else {
    assert.equal(typeof args.timezone, 'string');
  }
  messages.push(choice.message);
  messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature_c: 21, sky: 'clear' }) });
  const second = await client.chat.completions.create({ model, messages, tools: [weatherTool, timeTool] });
  checkCompletion(second);
  const fin = second.choices[0].finish_reason;
  assert.ok(['stop', 'length', 'tool_calls'].includes(fin), fin);
  if (fin === 'tool_calls') JSON.parse(second.choices[0].message.tool_calls[0].function.arguments);
  else assert.equal(typeof second.choices[0].message.content, 'string');
  // A named tool_choice forces that tool.
  const named = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Time in Tokyo?' }], tools: [weatherTool, timeTool],
    tool_choice: { type: 'function', function: { name: 'get_time' } },
  });
  assert.equal(named.choices[0].message.tool_calls[0].function.name, 'get_time');
  assert.equal(typeof JSON.parse(named.choices[0].message.tool_calls[0].function.arguments).timezone, 'string');
});

check('json_schema strict', async () => {
  const c = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Describe Paris as JSON: its country and population in millions.' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'city_info',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            country: { type: 'string' },
            population_millions: { type: 'integer', minimum: 0, maximum: 100 },
            capital: { type: 'boolean' },
          },
          required: ['country', 'population_millions', 'capital'],
          additionalProperties: false,
        },
      },
    },
  });
  checkCompletion(c);
  assert.equal(c.choices[0].finish_reason, 'stop');
  const v = JSON.parse(c.choices[0].message.content);
  assert.deepEqual(Object.keys(v).sort(), ['capital', 'country', 'population_millions']);
  assert.equal(typeof v.country, 'string');
  assert.ok(Number.isInteger(v.population_millions) && v.population_millions >= 0 && v.population_millions <= 100);
  assert.equal(typeof v.capital, 'boolean');
});

check('json_object', async () => {
  const c = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Reply with a JSON object.' }], response_format: { type: 'json_object' },
  });
  const v = JSON.parse(c.choices[0].message.content);
  assert.equal(typeof v, 'object');
  assert.ok(v !== null && !Array.isArray(v));
});

check('streaming text with include_usage', async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Say hello.' }], stream: true, stream_options: { include_usage: true },
    max_completion_tokens: 32,
  });
  let id = null, text = '', finish = null, usage = null, role = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    id ??= chunk.id;
    assert.equal(chunk.id, id);
    if (chunk.choices.length === 0) { usage = chunk.usage; continue; }
    assert.equal(chunk.usage, null);
    const d = chunk.choices[0].delta;
    if (d.role) role = d.role;
    if (d.content) text += d.content;
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.equal(role, 'assistant');
  assert.ok(['stop', 'length'].includes(finish), String(finish));
  assert.ok(usage, 'no usage chunk');
  checkUsage(usage);
  assert.ok(chunks >= 3);
  assert.equal(typeof text, 'string');
});

check('streaming tool-call deltas', async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Weather in Oslo in celsius?' }], tools: [weatherTool],
    tool_choice: 'required', stream: true, stream_options: { include_usage: true },
  });
  const calls = [];
  let finish = null, usage = null, fragments = 0;
  for await (const chunk of stream) {
    if (chunk.choices.length === 0) { usage = chunk.usage; continue; }
    const c = chunk.choices[0];
    for (const tc of c.delta.tool_calls ?? []) {
      fragments++;
      if (!calls[tc.index]) {
        assert.match(tc.id, /^call_/);
        assert.equal(tc.type, 'function');
        assert.equal(tc.function.arguments, '');
        calls[tc.index] = { id: tc.id, name: tc.function.name, arguments: '' };
      } else {
        assert.equal(tc.id, undefined);
        calls[tc.index].arguments += tc.function.arguments;
      }
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.ok(fragments >= 2, 'arguments arrive in fragments');
  assert.equal(typeof JSON.parse(calls[0].arguments).city, 'string');
  checkUsage(usage);
});

check('diffusing stream keeps append-only deltas', async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Say hello.' }], stream: true, diffusing: true, max_completion_tokens: 32,
  });
  let diffusion = 0, text = '';
  for await (const chunk of stream) {
    if (chunk.object === 'chat.completion.diffusion') {
      diffusion++;
      assert.equal(typeof chunk.choices[0].diffusion.content, 'string');
      assert.deepEqual(chunk.choices[0].delta, {});
      continue;
    }
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.ok(diffusion > 0);
  assert.equal(typeof text, 'string');
});

check('errors', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found' && e.param === 'model');
  await assert.rejects(
    client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], temperature: 5 }),
    (e) => e instanceof OpenAI.BadRequestError && e.code === 'invalid_value' && e.param === 'temperature' &&
           e.type === 'invalid_request_error');
  await assert.rejects(
    client.chat.completions.create({ model, messages: [{ role: 'tool', tool_call_id: 'call_x', content: '{}' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages[0].tool_call_id');
  await assert.rejects(
    client.chat.completions.create({ model, messages: [], stream: true }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages');
  await assert.rejects(client.models.retrieve('nope'), (e) => e instanceof OpenAI.NotFoundError);
  // The server is still up.
  const ok = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 8 });
  checkCompletion(ok);
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL - ${name}: ${e?.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
