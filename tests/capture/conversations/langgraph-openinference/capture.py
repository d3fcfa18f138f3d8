"""LangGraph conversations traced by OpenInference: a LangChain `create_agent` graph with a checkpointer, one
`invoke` per turn with the conversation's `thread_id` in `configurable`, the documented way to keep a thread.

LangGraph copies `configurable.thread_id` into the run's metadata and OpenInference's LangChain instrumentor
writes it as `session.id` on the spans it makes for the graph. The application chooses the thread id.
"""

import asyncio
import uuid

from conversation_scenarios import Turn, capture_conversations, current
from langchain.agents import create_agent
from langchain.tools import tool as lc_tool
from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
LangChainInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("travel-service")
CALLS = [0]  # chat model calls of the turn being served (a LangChain callback, not the spans)


class CountCalls(BaseCallbackHandler):
    def on_chat_model_start(self, *args, **kwargs):
        CALLS[0] += 1


agent = create_agent(
    ChatOpenAI(model="gpt-4o-mini", callbacks=[CountCalls()]),
    [lc_tool(function) for function in travel_tools(current)],
    system_prompt="You are a travel assistant.",
    checkpointer=InMemorySaver(),
    name="travel_agent",
)


async def new_thread():
    thread_id = f"thread-{uuid.uuid4()}"
    return thread_id, thread_id


async def serve(thread_id: str, request: str) -> Turn:
    CALLS[0] = 0
    config = {"configurable": {"thread_id": thread_id}}
    state = agent.invoke({"messages": [{"role": "user", "content": request}]}, config)
    return Turn(state["messages"][-1].content, CALLS[0])


asyncio.run(
    capture_conversations(
        serve,
        new_thread,
        flush=provider.force_flush,
        tracer=tracer,
        agent_name="travel_agent",
        id_attribute="session.id",
    )
)
