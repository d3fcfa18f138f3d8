"""Pydantic AI conversations: each turn is one `agent.run` given the previous turn's `all_messages()` as its
`message_history`, the documented way to continue a conversation.

Pydantic AI's own instrumentation (`Agent.instrument_all()`) writes the conversation id as
`gen_ai.conversation.id` on the agent run span and its model and tool spans; a run given a message history
keeps the history's id, so the first turn's `result.conversation_id` names the whole conversation.
"""

import asyncio
import os

from conversation_scenarios import Turn, capture_conversations, current
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.capabilities import Hooks
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from scenarios import travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
Agent.instrument_all()
tracer = trace.get_tracer("travel-service")
CALLS = [0]  # model requests of the turn being served (the agent's own hook, not the spans)
hooks = Hooks()


@hooks.on.before_model_request
async def count(ctx, request_context):
    CALLS[0] += 1
    return request_context


agent = Agent(
    OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"])),
    name="travel_agent",
    instructions="You are a travel assistant.",
    tools=travel_tools(current),
    capabilities=[hooks],
)


async def new_history():
    return [], None  # the conversation id is Pydantic AI's, known once the first turn has run


async def serve(history: list, request: str) -> Turn:
    CALLS[0] = 0
    result = await agent.run(request, message_history=list(history) or None)
    history[:] = result.all_messages()
    return Turn(result.output, CALLS[0], result.conversation_id)


asyncio.run(
    capture_conversations(
        serve,
        new_history,
        flush=provider.force_flush,
        tracer=tracer,
        agent_name="travel_agent",
        id_attribute="gen_ai.conversation.id",
    )
)
