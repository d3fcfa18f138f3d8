"""OpenAI Agents SDK conversations traced by Pydantic Logfire (`logfire.instrument_openai_agents()`): one
`SQLiteSession` per conversation keeps its history, the documented way to continue a conversation, and each
turn's `Runner.run` names the conversation as its trace's `group_id` (`RunConfig(group_id=...)`, which the SDK
documents as linking the traces of one conversation).

Logfire writes `group_id` on the `OpenAI Agents trace: {name}` span, the parent of the agent run span; with no
`group_id` set it writes `'null'` there. The SDK's own export to the OpenAI platform is switched off.
"""

import asyncio
import uuid

import logfire
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    RunHooks,
    Runner,
    SQLiteSession,
    function_tool,
    set_trace_processors,
)
from conversation_scenarios import Turn, capture_conversations, current
from openai import AsyncOpenAI
from opentelemetry import trace
from scenarios import travel_tools

logfire.configure(service_name="travel-service", send_to_logfire=False, console=False, metrics=False)
logfire.instrument_openai_agents()
set_trace_processors([])  # the SDK's own export to the OpenAI platform: not wanted, and unreachable here
tracer = trace.get_tracer("travel-service")
agent = Agent(
    name="travel_agent",
    instructions="You are a travel assistant.",
    model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI()),
    tools=[function_tool(f) for f in travel_tools(current)],
)


class CountCalls(RunHooks):
    """The model calls of one turn (the SDK's own hooks, not the spans)."""

    def __init__(self) -> None:
        self.calls = 0

    async def on_llm_start(self, context, agent, system_prompt, input_items) -> None:
        self.calls += 1


async def new_session():
    conversation_id = f"conv-{uuid.uuid4()}"
    return (SQLiteSession(conversation_id), conversation_id), conversation_id


async def serve(state, request: str) -> Turn:
    session, conversation_id = state
    hooks = CountCalls()
    result = await Runner.run(
        agent, request, session=session, hooks=hooks, run_config=RunConfig(group_id=conversation_id)
    )
    return Turn(result.final_output, hooks.calls)


asyncio.run(
    capture_conversations(
        serve,
        new_session,
        flush=logfire.force_flush,
        tracer=tracer,
        agent_name="travel_agent",
        id_attribute="group_id",
    )
)
