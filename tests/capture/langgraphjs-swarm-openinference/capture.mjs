/**
 * A LangGraph.js swarm (`@langchain/langgraph-swarm` `createSwarm`) of three `createReactAgent` agents handing
 * control to each other, traced by OpenInference's LangChain.js instrumentation
 * (`@arizeai/openinference-instrumentation-langchain`, the callback manager instrumented by hand). Spans go
 * through the OTel JS SDK (NodeTracerProvider, SimpleSpanProcessor, OTLP/HTTP protobuf); each request runs inside
 * a `handle_request` span.
 *
 * `intake_desk` (no tools of its own) hands a request to `claims_officer` (lookup_policy, file_claim,
 * issue_payout) with `pass_to_claims`, or to `records_keeper` (delete_account) with `hand_over_records`; the
 * officer can hand a customer over to the records keeper with `hand_over_records` too. The handoff tools have
 * names of the application's own: each is a `Command` to the parent graph that sets the active agent, marked
 * with its destination the way the library's own `transfer_to_<agent>` tools are, so the swarm wires it. The
 * agent handed to answers the user; the swarm ends when an agent answers in text. The models are `ChatOpenAI` on
 * Chat Completions against OPENAI_BASE_URL (one retry).
 *
 * The ground truth is the request run of the swarm (`claims_swarm`): the user's request, the last agent's answer (or the
 * failure), every agent's model calls (a callback on each agent's model), the tool calls recorded by the tools as
 * they ran, and the handoffs, recorded by the handoff tools as they ran.
 */
import path from 'node:path';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { Command, getCurrentTaskInput } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { createSwarm } from '@langchain/langgraph-swarm';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));
const { captureRequests, countingModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'langgraphjs_capture.mjs'));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'claims-swarm' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
const tracer = trace.getTracer('claims-swarm');

const SWARM = 'claims_swarm';
let s; // the scenario being captured
let run; // its request run
const modelCalls = new Map(); // model calls per agent in the current request
const claims = claimsTools({ tool: lcTool, z, scenario: () => s });

/** A handoff tool of the application's naming, from one agent to another, wired by its destination mark. */
function handoffTool(name, from, to, description) {
  const handoff = lcTool(async (_, config) => {
    run.handoffs.push({ from, to });
    const messages = getCurrentTaskInput().messages.concat(
      new ToolMessage({ content: `Passed to ${to}`, name, tool_call_id: config.toolCall.id }),
    );
    return new Command({ goto: to, graph: Command.PARENT, update: { messages, activeAgent: to } });
  }, { name, description, schema: z.object({}) });
  handoff.metadata = { __handoff_destination: to };
  return handoff;
}

function agent(name, prompt, tools) {
  const llm = countingModel(ChatOpenAI, modelCalls, name);
  return createReactAgent({ llm, tools, name, prompt });
}

const swarm = createSwarm({
  agents: [
    agent('intake_desk', 'You take insurance requests and pass them to the right desk.', [
      handoffTool('pass_to_claims', 'intake_desk', 'claims_officer', 'Policies, claims and payouts.'),
      handoffTool('hand_over_records', 'intake_desk', 'records_keeper', 'Customer records and accounts.'),
    ]),
    agent('claims_officer', 'You look up policies, file claims and pay them out.', [
      claims.lookup_policy, claims.file_claim, claims.issue_payout,
      handoffTool('hand_over_records', 'claims_officer', 'records_keeper', 'Customer records and accounts.'),
    ]),
    agent('records_keeper', 'You keep customer records and close accounts.', [claims.delete_account]),
  ],
  defaultActiveAgent: 'intake_desk',
}).compile({ name: SWARM });

const SCENARIOS = {
  happy: ['My kitchen flooded; file a 900 euro claim on policy PX-1.', [
    tool('pass_to_claims', {}),
    tool('lookup_policy', { policy_id: 'PX-1' }),
    tool('file_claim', { policy_id: 'PX-1', amount: 900 }),
    text('Claim C-1 is filed on PX-1 for 900 EUR; the excess is 150 EUR.'),
  ]],
  forbidden: ['Cancel everything and erase my customer record, id u-314.', [
    tool('hand_over_records', {}),
    tool('delete_account', { user_id: 'u-314' }),
    text('Your customer record u-314 has been erased.'),
  ]],
  tool_error: ['Pay out my settled 2400 euro claim now.', [
    tool('pass_to_claims', {}),
    tool('issue_payout', { amount: 2400 }),
    text('The payout failed: it exceeds the payout limit.'),
  ]],
  chain: ['Check policy PX-2, then close my account u-314.', [
    tool('pass_to_claims', {}),
    tool('lookup_policy', { policy_id: 'PX-2' }),
    tool('hand_over_records', {}),
    tool('delete_account', { user_id: 'u-314' }),
    text('PX-2 is travel cover with a 50 EUR excess; your account u-314 is closed.'),
  ]],
  worker_failure: ['What does policy PX-2 cover abroad?', [
    tool('pass_to_claims', {}),
    tool('lookup_policy', { policy_id: 'PX-2' }),
    failure(503, 'model backend overloaded'),
  ]],
};

await captureRequests({
  Scenario,
  scenarios: SCENARIOS,
  graphName: SWARM,
  tracer,
  provider,
  calls: modelCalls,
  begin: (scenario, requestRun) => { s = scenario; run = requestRun; },
  invoke: (request) => swarm.invoke({ messages: [{ role: 'user', content: request }] }),
  handoffs: () => run.handoffs,
});
