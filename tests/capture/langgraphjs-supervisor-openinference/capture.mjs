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
import { createSupervisor } from '@langchain/langgraph-supervisor';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { claimsTools } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'insurance.mjs'));
const { captureRequests, countingModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'langgraphjs_capture.mjs'));

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

const { lookup_policy: lookupPolicy, file_claim: fileClaim, issue_payout: issuePayout, delete_account: deleteAccount } =
  claimsTools({ tool: lcTool, z, scenario: () => s });

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

const chatModel = (agent) => countingModel(ChatOpenAI, modelCalls, agent);

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

await captureRequests({
  Scenario,
  scenarios: SCENARIOS,
  graphName: SUPERVISOR,
  tracer,
  provider,
  calls: modelCalls,
  begin: (scenario, requestRun) => { s = scenario; run = requestRun; },
  invoke: (request) => supervisor.invoke({ messages: [{ role: 'user', content: request }] }),
  handoffs: (_, messages) => withHandoffsBack(run.handoffs, messages),
});
