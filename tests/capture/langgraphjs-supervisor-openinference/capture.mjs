/**
 * A LangGraph.js supervisor (`@langchain/langgraph-supervisor` `createSupervisor`) over two `createReactAgent`
 * workers, traced by OpenInference's LangChain.js instrumentation (`@arizeai/openinference-instrumentation-langchain`,
 * the callback manager instrumented by hand as its README says). Spans go through the OTel JS SDK
 * (NodeTracerProvider, SimpleSpanProcessor, OTLP/HTTP protobuf); each request runs inside a `handle_request` span.
 *
 * `claims_supervisor` routes insurance requests: it hands work to `claims_officer` (lookup_policy, file_claim,
 * issue_payout) with its own handoff tool `pass_to_claims`, and to `records_keeper` (delete_account) with
 * `hand_over_records`, each a `Command` to the parent graph like the library's generated `transfer_to_<agent>`
 * tools (also offered, never called); each worker hands control back through the library's automatic
 * handoff-back messages, without a model call. The models are `ChatOpenAI` on Chat Completions against
 * OPENAI_BASE_URL (one retry).
 *
 * The ground truth is the request run of the supervisor graph: the user's request, the supervisor's last
 * answer (or the failure), every agent's model calls (a callback on each agent's model), the tool calls
 * recorded by the tools as they ran, and the handoffs: each handoff tool the supervisor ran, and each
 * handoff back the graph's final messages show.
 */
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { Command, getCurrentTaskInput } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { createSupervisor } from '@langchain/langgraph-supervisor';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'claims-service' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
const tracer = trace.getTracer('claims-service');

const SUPERVISOR = 'claims_supervisor';
let s; // the scenario being captured
let run; // its request run
const modelCalls = new Map(); // model calls per agent in the current request

function claimsTool(name, description, schema, fn) {
  return lcTool(async (args) => {
    try {
      const result = fn(args);
      s.tool(name, args, result);
      return result;
    } catch (err) {
      s.tool(name, args, null, true);
      throw err;
    }
  }, { name, description, schema: z.object(schema) });
}

const lookupPolicy = claimsTool('lookup_policy', 'The cover and excess of an insurance policy.',
  { policy_id: z.string() },
  (a) => ({ 'PX-1': 'home cover, excess 150 EUR', 'PX-2': 'travel cover, excess 50 EUR' })[a.policy_id]);
const fileClaim = claimsTool('file_claim', 'File a claim against a policy.',
  { policy_id: z.string(), amount: z.number().int() },
  (a) => `claim C-1 filed on ${a.policy_id} for ${a.amount} EUR`);
const issuePayout = claimsTool('issue_payout', 'Pay a settled claim out to the customer.',
  { amount: z.number().int() },
  () => { throw new Error('payout limit exceeded'); });
const deleteAccount = claimsTool('delete_account', "Delete a customer's account.",
  { user_id: z.string() }, (a) => `account ${a.user_id} deleted`);

/** A handoff tool of the application's naming: the same Command to the parent graph as the library's own. */
function handoffTool(name, agentName, description) {
  return lcTool(async (_, config) => {
    run.handoffs.push({ from: SUPERVISOR, to: agentName });
    const messages = getCurrentTaskInput().messages.concat(
      new ToolMessage({ content: `Passed to ${agentName}`, name, tool_call_id: config.toolCall.id }),
    );
    return new Command({ goto: agentName, graph: Command.PARENT, update: { messages } });
  }, { name, description, schema: z.object({}) });
}

function chatModel(agent) {
  return new ChatOpenAI({
    model: 'gpt-4o-mini',
    maxRetries: 1,
    configuration: { baseURL: process.env.OPENAI_BASE_URL },
    callbacks: [{ handleChatModelStart: () => modelCalls.set(agent, (modelCalls.get(agent) ?? 0) + 1) }],
  });
}

const officer = createReactAgent({
  llm: chatModel('claims_officer'),
  tools: [lookupPolicy, fileClaim, issuePayout],
  name: 'claims_officer',
  prompt: 'You look up policies, file claims and pay them out.',
});
const keeper = createReactAgent({
  llm: chatModel('records_keeper'),
  tools: [deleteAccount],
  name: 'records_keeper',
  prompt: 'You keep customer records and close accounts.',
});
const supervisor = createSupervisor({
  agents: [officer, keeper],
  llm: chatModel(SUPERVISOR),
  tools: [
    handoffTool('pass_to_claims', 'claims_officer', 'Pass policy, claim and payout work to the claims officer.'),
    handoffTool('hand_over_records', 'records_keeper', 'Hand customer record changes to the records keeper.'),
  ],
  prompt: 'You route insurance requests: claims work to the claims officer, records to the records keeper.',
  supervisorName: SUPERVISOR,
}).compile({ name: SUPERVISOR });

const SCENARIOS = {
  happy: ['My kitchen flooded; file a 900 euro claim on policy PX-1.', [
    tool('pass_to_claims', {}),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Filed claim C-1 on PX-1 for 900 EUR.'),
    text('Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR.'),
  ]],
  forbidden: ['Cancel everything and erase my customer record, id u-314.', [
    tool('hand_over_records', {}),
    tool('delete_account', { user_id: 'u-314' }),
    text('Record u-314 erased.'),
    text('Your customer record u-314 has been erased.'),
  ]],
  tool_error: ['Pay out my settled 2400 euro claim now.', [
    tool('pass_to_claims', {}),
    tool('issue_payout', { amount: 2400 }),
    text('The payout failed: payout limit exceeded.'),
    text('The payout failed: it exceeds the payout limit.'),
  ]],
  direct_answer: ['Do you handle travel insurance?', [
    text('Yes: travel cover is one of our policies, PX-2 for instance.'),
  ]],
  worker_failure: ['What does policy PX-2 cover abroad?', [
    tool('pass_to_claims', {}),
    tool('lookup_policy', { policy_id: 'PX-2' }),
    failure(503, 'model backend overloaded'),
  ]],
};

/** The handoffs back to the supervisor that the graph's final messages show, after each handoff out. */
function withHandoffsBack(handoffs, messages) {
  const back = messages
    .filter((m) => (m.tool_calls ?? []).some((c) => c.name === `transfer_back_to_${SUPERVISOR}`))
    .map((m) => ({ from: m.name, to: SUPERVISOR }));
  return handoffs.flatMap((h, i) => (back[i] ? [h, back[i]] : [h]));
}

for (const [name, [request, replies]] of Object.entries(SCENARIOS)) {
  s = await new Scenario(name, replies).begin();
  await tracer.startActiveSpan('handle_request', async (span) => {
    run = s.run(SUPERVISOR, request);
    Object.assign(run, { handoffs: [], nested_runs_allowed: true });
    modelCalls.clear();
    const count = () => [...modelCalls.values()].reduce((a, b) => a + b, 0);
    try {
      const state = await supervisor.invoke({ messages: [{ role: 'user', content: request }] });
      const messages = state.messages;
      run.handoffs = withHandoffsBack(run.handoffs, messages);
      s.finish(messages.at(-1).content, 'ok', count());
    } catch (err) {
      console.log(`   request failed as scripted: ${err.name}: ${err.message}`);
      s.finish(null, 'error', count());
    }
    run.note = `Model calls per agent: ${JSON.stringify(Object.fromEntries(modelCalls))}.`;
    span.end();
  });
  await provider.forceFlush();
  await s.end({ nested_runs_allowed: true });
}
await provider.shutdown();
