/**
 * A Mastra workflow whose steps are agents (`createStep(agent)` twice, a `.map` between them), traced by Mastra's own
 * observability (`@mastra/observability`) exporting through `@mastra/otel-exporter` (custom provider, OTLP/HTTP
 * protobuf). `meter_triage` (read_meter) reads the request and writes a brief; `service_desk` (book_engineer,
 * waive_late_fee, delete_account) carries the brief out and answers. The model is an `@ai-sdk/openai-compatible`
 * chat model at OPENAI_BASE_URL. The service's `handle_request` span (a separate OTel SDK TracerProvider) is joined
 * through `tracingOptions: { traceId, parentSpanId }`.
 *
 * The ground truth is the request run of the workflow, entered at its first agent: the user's request, the last
 * agent's answer (none when the workflow failed), both agents' model calls (counted on each agent's model) and tool
 * calls (recorded by the tools), and no handoff (moving from one step to the next is the workflow's).
 */
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { countedChatModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'model_calls.mjs'));

process.env.MASTRA_TELEMETRY_DISABLED = '1'; // no product analytics calls from new Mastra()
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'utility-service' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
trace.setGlobalTracerProvider(provider);
const tracer = trace.getTracer('utility-service');

let s; // the scenario being captured
const calls = []; // the agent behind each model call of the current request, in order

/** The chat model, noting which agent makes each call. */
const countedModel = (agentName) => countedChatModel(createOpenAICompatible, () => calls.push(agentName));

/** A tool that records what it received and returned (or that it failed) into the request run. */
const def = (id, description, schema, fn) => createTool({
  id,
  description,
  inputSchema: z.object(schema),
  execute: async (args) => {
    try {
      const result = fn(args);
      s.tool(id, args, result);
      return result;
    } catch (err) {
      s.tool(id, args, null, true);
      throw err;
    }
  },
});
const readMeter = def('read_meter', 'The latest reading of an electricity meter.', { meter_id: z.string() },
  (a) => `${a.meter_id}: 48213 kWh, read today at 07:40`);
const bookEngineer = def('book_engineer', 'Book an engineer visit for a meter.', { meter_id: z.string(), slot: z.string() },
  (a) => `engineer booked for ${a.meter_id} on ${a.slot}, job EV-3391`);
const waiveLateFee = def('waive_late_fee', 'Waive the late-payment fee of an invoice.', { invoice_id: z.string() },
  () => { throw new Error('fee ledger sealed'); });
const deleteAccount = def('delete_account', "Delete a customer's account.", { user_id: z.string() },
  (a) => `account ${a.user_id} deleted`);

const meterTriage = new Agent({
  id: 'meter_triage',
  name: 'meter_triage',
  instructions: "You triage energy customers' requests into a brief; read their meter when one is named.",
  model: countedModel('meter_triage'),
  tools: { read_meter: readMeter },
});
const serviceDesk = new Agent({
  id: 'service_desk',
  name: 'service_desk',
  instructions: 'You carry out a triage brief: engineer visits, late-fee waivers, account closures.',
  model: countedModel('service_desk'),
  tools: { book_engineer: bookEngineer, waive_late_fee: waiveLateFee, delete_account: deleteAccount },
});

const workflow = createWorkflow({
  id: 'customer_request',
  inputSchema: z.object({ prompt: z.string() }),
  outputSchema: z.object({ text: z.string() }),
})
  .then(createStep(meterTriage))
  .map(async ({ inputData }) => ({ prompt: `Carry out this brief: ${inputData.text}` }))
  .then(createStep(serviceDesk))
  .commit();

const exporter = new OtelExporter({
  provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
  signals: { logs: false }, // Mastra's own log lines, not agent content
});
const mastra = new Mastra({
  agents: { meter_triage: meterTriage, service_desk: serviceDesk },
  workflows: { customer_request: workflow },
  observability: new Observability({ configs: { otel: { serviceName: 'utility-service', exporters: [exporter] } } }),
});

/** One request through the workflow; the ground truth is what the run returned. */
async function serve(prompt) {
  const run = s.run('meter_triage', prompt);
  calls.length = 0;
  const { traceId, spanId } = trace.getActiveSpan().spanContext();
  const started = await mastra.getWorkflow('customer_request').createRun();
  const result = await started.start({ inputData: { prompt }, tracingOptions: { traceId, parentSpanId: spanId } });
  const ok = result.status === 'success';
  if (!ok) console.log(`   workflow ${result.status}: ${result.error?.message ?? result.error}`);
  s.finish(ok ? result.result.text : null, ok ? 'ok' : 'error', calls.length);
  Object.assign(run, {
    handoffs: [],
    nested_runs_allowed: true,
    note: `The request run is the workflow's, with both agents' model and tool calls; model calls, by whom: ${JSON.stringify(calls)}.`,
  });
}

const SCENARIOS = [
  ['happy', 'Read meter M-4471 and book an engineer visit for Tuesday morning.', [
    tool('read_meter', { meter_id: 'M-4471' }),
    text('Meter M-4471 reads 48213 kWh; book an engineer for M-4471 on Tuesday morning.'),
    tool('book_engineer', { meter_id: 'M-4471', slot: 'Tuesday morning' }),
    text('Your meter M-4471 reads 48213 kWh and an engineer visits on Tuesday morning, job EV-3391.'),
  ]],
  ['forbidden', 'Read meter M-5120 for my final bill and close my account, customer u-310.', [
    tool('read_meter', { meter_id: 'M-5120' }),
    text('Final reading of M-5120 is 48213 kWh; close the account of customer u-310.'),
    tool('delete_account', { user_id: 'u-310' }),
    text('Your final reading is 48213 kWh and account u-310 is closed.'),
  ]],
  ['tool_error', 'Please waive the late fee on invoice INV-902.', [
    text('Waive the late fee on invoice INV-902.'),
    tool('waive_late_fee', { invoice_id: 'INV-902' }),
    text('Sorry, the late fee on INV-902 cannot be waived right now: the fee ledger is sealed.'),
  ]],
  ['agent_error', 'Read meter M-6002 and book an engineer for Friday.', [
    tool('read_meter', { meter_id: 'M-6002' }),
    text('Meter M-6002 reads 48213 kWh; book an engineer for M-6002 on Friday.'),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, prompt, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await tracer.startActiveSpan('handle_request', async (span) => {
    try {
      await serve(prompt);
    } finally {
      span.end();
    }
  });
  await mastra.observability.getDefaultInstance().flush();
  await provider.forceFlush();
  await s.end({ nested_runs_allowed: true });
}
await mastra.shutdown?.();
await provider.shutdown();
