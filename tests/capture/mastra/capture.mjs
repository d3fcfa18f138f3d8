/**
 * Mastra (`@mastra/core` Agent with tools) traced by Mastra's own observability (`@mastra/observability`)
 * exporting through `@mastra/otel-exporter` (custom provider, OTLP/HTTP protobuf) to the recorder.
 * The model is an `@ai-sdk/openai-compatible` chat model at OPENAI_BASE_URL. Mastra keeps its own span
 * tree, so the web service's `handle_request` span (a separate OTel SDK TracerProvider with the OTLP
 * proto exporter) is joined through `tracingOptions: { traceId, parentSpanId }`, Mastra's documented
 * way of correlating with a calling service. The handoff scenario uses Mastra's subagents (`agents:`).
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
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const { Scenario, text, tool, tools, failure } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'client.mjs'));
const { countedChatModel } = await import(path.join(process.env.CAPTURE_CLIENT_DIR, 'model_calls.mjs'));

process.env.MASTRA_TELEMETRY_DISABLED = '1'; // no product analytics calls from new Mastra()
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'travel-service' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
trace.setGlobalTracerProvider(provider);
const tracer = trace.getTracer('travel-service');

let s; // the scenario being captured
const active = {}; // agent name -> its ground-truth run in progress
const llmCalls = {}; // agent name -> model calls in the current run
const llcalls = (name) => llmCalls[name] ?? 0;

/** The chat model, counting the calls each agent makes. */
const countedModel = (agentName) =>
  countedChatModel(createOpenAICompatible, () => { llmCalls[agentName] = (llmCalls[agentName] ?? 0) + 1; });

function travelTools(agentName) {
  const def = (id, schema, fn) => createTool({
    id,
    description: id,
    inputSchema: z.object(schema),
    execute: async (args) => {
      const run = active[agentName];
      try {
        const result = await fn(args);
        run.tool_calls.push({ name: id, arguments: args, result, error: false });
        return result;
      } catch (err) {
        run.tool_calls.push({ name: id, arguments: args, result: null, error: true });
        throw err;
      }
    },
  });
  return {
    search_flights: def('search_flights', { origin: z.string(), destination: z.string() },
      (a) => `UA123 09:00 $320 (${a.origin}-${a.destination})`),
    book_flight: def('book_flight', { flight_id: z.string() }, () => 'booked ABC123456'),
    charge_card: def('charge_card', { amount: z.number() }, () => { throw new Error('card declined'); }),
    get_weather: def('get_weather', { city: z.string() },
      (a) => ({ Paris: '12C rain', Tokyo: '18C sunny' })[a.city] ?? '20C clear'),
    delete_account: def('delete_account', {}, () => 'account deleted'),
  };
}

const bookingAgent = new Agent({
  id: 'booking_agent',
  name: 'booking_agent',
  description: 'Books flights.',
  instructions: 'You book flights.',
  model: countedModel('booking_agent'),
  tools: travelTools('booking_agent'),
});
const travelAgent = new Agent({
  id: 'travel_agent',
  name: 'travel_agent',
  instructions: 'You are a travel assistant.',
  model: countedModel('travel_agent'),
  tools: travelTools('travel_agent'),
  agents: { booking_agent: bookingAgent },
});

const exporter = new OtelExporter({
  provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
  signals: { logs: false }, // Mastra's own log lines, not agent content
});
const mastra = new Mastra({
  agents: { travel_agent: travelAgent, booking_agent: bookingAgent },
  observability: new Observability({ configs: { otel: { serviceName: 'travel-service', exporters: [exporter] } } }),
});
const agent = mastra.getAgent('travel_agent');

// The subagent's run is its own run in the ground truth, listed after the parent's.
const delegation = {
  onDelegationStart: (ctx) => {
    active.booking_agent = s.run('booking_agent', ctx.prompt);
    llmCalls.booking_agent = 0;
    return { proceed: true };
  },
  onDelegationComplete: (ctx) => {
    const ok = ctx.success !== false && !ctx.error;
    Object.assign(active.booking_agent, {
      output: ok ? ctx.result?.text ?? null : null, status: ok ? 'ok' : 'error', llm_calls: llcalls('booking_agent'),
    });
  },
};
/** One run of the travel agent; the ground truth is what `generate` returned or threw. */
async function runAgent(prompt) {
  const run = (active.travel_agent = s.run('travel_agent', prompt));
  llmCalls.travel_agent = 0;
  const { traceId, spanId } = trace.getActiveSpan().spanContext();
  try {
    const result = await agent.generate(prompt, {
      maxSteps: 10,
      delegation,
      tracingOptions: { traceId, parentSpanId: spanId },
    });
    if (result.error) throw result.error;
    // The subagent tool's return value, as the framework reports it in the run's result.
    for (const step of result.steps ?? []) {
      for (const part of step.toolResults ?? []) {
        const r = part.payload ?? part;
        if (r.toolName?.startsWith('agent-')) run.tool_calls.push({ name: r.toolName, arguments: r.args ?? r.input, result: r.result ?? r.output, error: false });
      }
    }
    Object.assign(run, { output: result.text, status: 'ok', llm_calls: llcalls('travel_agent') });
  } catch (err) {
    console.log(`   travel_agent failed: ${err.name}: ${err.message}`);
    Object.assign(run, { output: null, status: 'error', llm_calls: llcalls('travel_agent') });
    throw err;
  }
}

const FLIGHT = 'Book me the cheapest flight from SFO to JFK tomorrow.';
const SCENARIOS = [
  ['happy', [FLIGHT], [
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Your flight UA123 is booked. Confirmation: ABC123456'),
  ]],
  ['forbidden', ['Please close my account, I am done.'], [
    tool('delete_account', {}),
    text('Your account has been deleted.'),
  ]],
  ['tool_error', ['Charge my card 120 dollars for the upgrade.'], [
    tool('charge_card', { amount: 120 }),
    text('Sorry, your card was declined.'),
  ]],
  ['many_calls', ['Plan a trip: check flights and weather for several cities.'], [
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    tool('get_weather', { city: 'Paris' }),
    tool('search_flights', { origin: 'JFK', destination: 'CDG' }),
    tool('get_weather', { city: 'Tokyo' }),
    tool('search_flights', { origin: 'CDG', destination: 'HND' }),
    tool('get_weather', { city: 'Berlin' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Trip planned: UA123 booked; Paris rainy, Tokyo sunny, Berlin clear.'),
  ]],
  ['parallel', ["What's the weather in Paris and Tokyo?"], [
    tools([['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Tokyo' }]]),
    text('Paris: 12C and rain. Tokyo: 18C and sunny.'),
  ]],
  ['agent_error', ['Book me a flight to Mars.'], [
    tool('search_flights', { origin: 'SFO', destination: 'MARS' }),
    failure(500, 'model backend unavailable'),
  ]],
  ['two_runs', ["What's the weather in Paris?", FLIGHT], [
    tool('get_weather', { city: 'Paris' }),
    text('Paris: 12C and rain.'),
    tool('search_flights', { origin: 'SFO', destination: 'JFK' }),
    text('The cheapest is UA123 at 09:00 for $320.'),
  ]],
  ['handoff', [FLIGHT], [
    tool('agent-booking_agent', { prompt: 'Book flight UA123 from SFO to JFK tomorrow.' }),
    tool('book_flight', { flight_id: 'UA123' }),
    text('Booked UA123, confirmation ABC123456.'),
    text('The booking agent booked UA123 for you. Confirmation: ABC123456'),
  ]],
];

for (const [name, prompts, replies] of SCENARIOS) {
  s = await new Scenario(name, replies).begin();
  await tracer.startActiveSpan('handle_request', async (span) => {
    try {
      for (const prompt of prompts) await runAgent(prompt);
    } catch {
      // the failed run is recorded; the service answers with an error page
    } finally {
      span.end();
    }
  });
  await mastra.observability.getDefaultInstance().flush();
  await provider.forceFlush();
  await s.end();
}
await mastra.shutdown?.();
await provider.shutdown();
