"""A chat service on the OpenAI SDK (a hand-written tool loop) traced by openinference-instrumentation-openai,
which sets no conversation id: the application names the conversation itself, as `travel.conversation_id` on
its own `POST /chat` server span (the shipped suite lists it in `conversations.id_attributes`).

The service keeps each conversation's messages and sends them with every turn. The `ended` conversation's
last turn carries `otelgrade.conversation.end=true` on the same span: the user said goodbye.
"""

import asyncio
import json
import uuid

from conversation_scenarios import Turn, capture_conversations, current
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import CHAT_TOOLS, run_tool

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
client = OpenAI()


async def new_conversation():
    conversation_id = f"conv-{uuid.uuid4()}"
    return [{"role": "system", "content": "You are a travel assistant."}], conversation_id


async def serve(messages: list, request: str) -> Turn:
    """One user turn: ask the model with the whole conversation, run the tools it asks for, until it answers."""
    messages.append({"role": "user", "content": request})
    calls = 0
    while True:
        calls += 1
        completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=CHAT_TOOLS)
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return Turn(message.content, calls)
        for call in message.tool_calls:
            answer = run_tool(current(), call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})


asyncio.run(
    capture_conversations(
        serve,
        new_conversation,
        flush=provider.force_flush,
        tracer=tracer,
        agent_name="travel_agent",
        id_attribute="travel.conversation_id",
        app_attribute="travel.conversation_id",
        with_end_marker=True,
    )
)
