/**
 * Vercel AI SDK 7 (`ai`) agents called as tools, with its default OpenTelemetry integration (`@ai-sdk/otel`
 * `OpenTelemetry`, GenAI semantic conventions) registered with `registerTelemetry` and
 * `experimental_telemetry` on every call. `parcel_concierge` is `generateText` with the tools
 * `brief_tracking_desk` and `brief_refunds_desk`, whose execute runs another agent's `generateText`
 * (tracking_desk: trace_shipment, reroute_shipment; refunds_desk: refund_postage, which fails), and
 * delete_account. Every agent talks Chat Completions to the scripted model through
 * `@ai-sdk/openai-compatible`. Spans go through the OTel JS SDK (TracerProvider, SimpleSpanProcessor, OTLP/HTTP
 * protobuf exporter). Each request runs inside a `handle_request` span.
 *
 * The ground truth is the request run of parcel_concierge: the user's request, its answer, every agent's model
 * calls (each generateText's onLanguageModelCallStart) and tool calls in the order they were made (the agent tool
 * first, then the calls its agent made inside it), no handoff (an agent called as a tool answers its caller).
 * In `desk_failure` the model backend fails during tracking_desk's turn: the agent tool fails, then the
 * concierge's next model call fails too and its generateText throws.
 */
import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, isStepCount, registerTelemetry, tool as aiTool } from 'ai';
import { z } from 'zod';

const { Scenario, text, tool, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'parcel-desk' }),
  spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter() })],
});
trace.setGlobalTracerProvider(provider);
registerTelemetry(new OpenTelemetry());
const tracer = trace.getTracer('parcel-desk');

const model = createOpenAICompatible({
  name: 'openai',
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
}).chatModel('gpt-4o-mini');

let s; // the scenario being captured
let run; // its request run: every agent's tool calls go to it, in the order they start
let llmCalls = 0; // every agent's model calls of the request in progress

/** A tool whose call is recorded when it starts (so an agent tool comes before its agent's calls). */
const recorded = (name, description, schema, fn) => aiTool({
  description,
  inputSchema: z.object(schema),
  execute: async (args) => {
    const call = { name, arguments: args, result: null, error: false };
    run.tool_calls.push(call);
    try {
      call.result = await fn(args);
      return call.result;
    } catch (err) {
      call.error = true;
      throw err;
    }
  },
});

const shipping = {
  trace_shipment: recorded('trace_shipment', 'Where a shipment is now.', { tracking_no: z.string() },
    (a) => `${a.tracking_no}: sorted at the Lyon hub, out for delivery tomorrow`),
  reroute_shipment: recorded('reroute_shipment', 'Send a shipment to another depot.',
    { tracking_no: z.string(), depot: z.string() },
    (a) => `${a.tracking_no} rerouted to the ${a.depot} depot, ticket RR-5520`),
  refund_postage: recorded('refund_postage', 'Refund the postage paid for a shipment.', { tracking_no: z.string() },
    () => { throw new Error('postage ledger frozen'); }),
  delete_account: recorded('delete_account', "Delete a customer's account.", { user_id: z.string() },
    (a) => `account ${a.user_id} deleted`),
};

/** One agent: generateText with its tools and a step limit; its answer, or what it threw. */
async function agent(name, prompt, tools) {
  const result = await generateText({
    model,
    system: `You are the parcel service's ${name.replaceAll('_', ' ')}.`,
    prompt,
    tools,
    stopWhen: isStepCount(10),
    experimental_telemetry: { isEnabled: true, functionId: name },
    onLanguageModelCallStart: () => { llmCalls += 1; },
  });
  return result.text;
}

const desks = {
  brief_tracking_desk: recorded('brief_tracking_desk', 'Brief the tracking desk, which traces and reroutes shipments.',
    { request: z.string() },
    (a) => agent('tracking_desk', a.request, { trace_shipment: shipping.trace_shipment, reroute_shipment: shipping.reroute_shipment })),
  brief_refunds_desk: recorded('brief_refunds_desk', 'Brief the refunds desk, which refunds postage.',
    { request: z.string() },
    (a) => agent('refunds_desk', a.request, { refund_postage: shipping.refund_postage })),
};

const SCENARIOS = [
  ['reroute_via_desk', 'Parcel TR-8812 is going to the wrong city; send it to the Ghent depot instead.', [
    tool('brief_tracking_desk', { request: 'Trace TR-8812 and reroute it to the Ghent depot.' }),
    tool('trace_shipment', { tracking_no: 'TR-8812' }),
    tool('reroute_shipment', { tracking_no: 'TR-8812', depot: 'Ghent' }),
    text('TR-8812 was at the Lyon hub; rerouted to Ghent, ticket RR-5520.'),
    text('Your parcel TR-8812 now goes to the Ghent depot (ticket RR-5520).'),
  ]],
  ['refund_error', 'Refund the postage of parcel TR-4040, it never left.', [
    tool('brief_refunds_desk', { request: 'Refund the postage of TR-4040.' }),
    tool('refund_postage', { tracking_no: 'TR-4040' }),
    text('The refund of TR-4040 failed: the postage ledger is frozen.'),
    text('Sorry, the postage of TR-4040 cannot be refunded yet: our postage ledger is frozen.'),
  ]],
  ['close_account', 'Close my parcel account, customer c-5150.', [
    tool('delete_account', { user_id: 'c-5150' }),
    text('Your parcel account c-5150 is closed.'),
  ]],
  ['desk_failure', 'Where is parcel TR-8812?', [
    tool('brief_tracking_desk', { request: 'Trace TR-8812.' }),
    tool('trace_shipment', { tracking_no: 'TR-8812' }),
    failure(500, 'model backend unavailable'),
  ]],
];

for (const [name, request, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  run = s.run('parcel_concierge', request);
  llmCalls = 0;
  await tracer.startActiveSpan('handle_request', async (span) => {
    try {
      const answer = await agent('parcel_concierge', request, { ...desks, delete_account: shipping.delete_account });
      s.finish(answer, 'ok', llmCalls);
    } catch (err) {
      console.log(`   ${name} failed as scripted: ${err.name}: ${err.message}`);
      s.finish(null, 'error', llmCalls);
    } finally {
      span.end();
    }
  });
  Object.assign(run, { handoffs: [], nested_runs_allowed: true });
  await provider.forceFlush();
  await s.end({
    nested_runs_allowed: true,
    note: 'The request run is parcel_concierge\'s, with the calls of the agents it ran as tools (brief_*_desk); '
      + 'each inner agent\'s own run may also be reported, nested.',
  });
}
await provider.shutdown();
