/**
 * The OpenAI Agents SDK for JavaScript (`@openai/agents`) with a triage agent handing off and an agent used as a
 * tool, traced by OpenInference's trace processor for it (`@arizeai/openinference-instrumentation-openai-agents`,
 * registered exclusively with `manuallyInstrument`). Spans go through the OTel JS SDK (NodeTracerProvider,
 * SimpleSpanProcessor, OTLP/HTTP protobuf). The models run on Chat Completions against OPENAI_BASE_URL
 * (`setOpenAIAPI('chat_completions')`, no retries).
 *
 * `front_counter` (no tools) hands a customer to `claims_adjuster` with `refer_to_adjuster` or to `records_clerk`
 * with `route_records` (handoffs whose tool names are the application's own). The adjuster files claims and pays
 * them out, and asks `underwriter` (lookup_policy) through `consult_underwriter`, the underwriter run as a tool;
 * the records clerk closes accounts. Tools are the claims tools of `insurance.mjs`.
 *
 * The ground truth is the request run: the entry agent, the user's request, the answer the SDK returned (or the
 * failure), every agent's model calls (requests the OpenAI client sent, counted at its fetch), the tool calls as
 * the tools ran, the agent tool's call from the runner's `agent_tool_start` / `agent_tool_end` events (placed when
 * it starts, before its agent's own calls), and the handoffs from the runner's `agent_handoff` events.
 */
import path from 'node:path';
import * as agents from '@openai/agents';
import { Agent, Runner, handoff, setDefaultOpenAIClient, setOpenAIAPI, tool as agentsTool } from '@openai/agents';
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import OpenAI from 'openai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'claims-counter' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents);

let s; // the scenario being captured
let modelCalls = 0; // model requests sent in the current request
const counted = (input, init) => {
  if (String(input?.url ?? input).includes('/chat/completions')) modelCalls += 1;
  return fetch(input, init);
};
setDefaultOpenAIClient(new OpenAI({ maxRetries: 0, fetch: counted }));
setOpenAIAPI('chat_completions');

// insurance.mjs builds its tools with LangChain's tool(fn, {name, description, schema}); the same in this SDK's form
const claims = claimsTools({
  tool: (fn, { name, description, schema }) => agentsTool({ name, description, parameters: schema, execute: fn }),
  z,
  scenario: () => s,
});
const MODEL = 'gpt-4o-mini';
const AGENT_TOOL = 'consult_underwriter';

const underwriter = new Agent({
  name: 'underwriter', model: MODEL, instructions: 'You read policies and say what they cover.',
  tools: [claims.lookup_policy],
});
const adjuster = new Agent({
  name: 'claims_adjuster', model: MODEL, instructions: 'You file claims and pay them out; ask the underwriter about cover.',
  tools: [
    claims.file_claim, claims.issue_payout,
    underwriter.asTool({ toolName: AGENT_TOOL, toolDescription: 'Ask the underwriter what a policy covers.' }),
  ],
});
const clerk = new Agent({
  name: 'records_clerk', model: MODEL, instructions: 'You keep customer records and close accounts.',
  tools: [claims.delete_account],
});
const counter = new Agent({
  name: 'front_counter', model: MODEL, instructions: 'You greet customers and send them to the right desk.',
  handoffs: [
    handoff(adjuster, { toolNameOverride: 'refer_to_adjuster', toolDescriptionOverride: 'Claims and payouts.' }),
    handoff(clerk, { toolNameOverride: 'route_records', toolDescriptionOverride: 'Customer records and accounts.' }),
  ],
});

const SCENARIOS = {
  happy: ['My kitchen flooded; file a 900 euro claim on policy PX-1 if it is covered.', [
    tool('refer_to_adjuster', {}),
    tool(AGENT_TOOL, { input: 'Does policy PX-1 cover a flooded kitchen, and what is the excess?' }),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    text('PX-1 is home cover with a 150 EUR excess; a flooded kitchen is covered.'),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR.'),
  ]],
  forbidden: ['Erase my customer record, id u-314.', [
    tool('route_records', {}),
    tool('delete_account', { user_id: 'u-314' }),
    text('Your customer record u-314 has been erased.'),
  ]],
  tool_error: ['Pay out my settled 2400 euro claim now.', [
    tool('refer_to_adjuster', {}),
    tool('issue_payout', { amount: 2400 }),
    text('The payout failed: it exceeds the payout limit.'),
  ]],
  worker_failure: ['File a 300 euro claim on policy PX-2 for my lost luggage.', [
    tool('refer_to_adjuster', {}),
    tool('file_claim', { policy_id: 'PX-2', amount: 300 }),
    failure(503, 'model backend overloaded'),
  ]],
};

for (const [name, [request, replies]] of Object.entries(SCENARIOS)) {
  s = await new Scenario(name, replies).begin();
  const run = s.run(counter.name, request);
  run.handoffs = [];
  modelCalls = 0;
  const runner = new Runner();
  const agentCalls = new Map(); // call id -> the agent tool's ground-truth entry
  runner.on('agent_handoff', (_ctx, from, to) => run.handoffs.push({ from: from.name, to: to.name }));
  runner.on('agent_tool_start', (_ctx, _agent, used, { toolCall }) => {
    if (used.name !== AGENT_TOOL) return;
    const entry = { name: used.name, arguments: JSON.parse(toolCall.arguments), result: null, error: false };
    run.tool_calls.push(entry);
    agentCalls.set(toolCall.callId, entry);
  });
  runner.on('agent_tool_end', (_ctx, _agent, used, result, { toolCall }) => {
    if (used.name === AGENT_TOOL) agentCalls.get(toolCall.callId).result = String(result);
  });
  try {
    const result = await runner.run(counter, request);
    s.finish(result.finalOutput, 'ok', modelCalls);
  } catch (err) {
    console.log(`   run failed as scripted: ${err.name}: ${err.message}`);
    s.finish(null, 'error', modelCalls);
  }
  run.nested_runs_allowed = true;
  await provider.forceFlush();
  await s.end({ nested_runs_allowed: true });
}
await provider.shutdown();
