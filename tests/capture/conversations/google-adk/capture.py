"""Google ADK conversations: one session per conversation (InMemorySessionService), one `run_async` per turn.

ADK's native GenAI spans carry the session id as `gen_ai.conversation.id` on every span it writes
(invoke_workflow, invoke_agent, generate_content, execute_tool). The application chooses the session, so the
ground truth's conversation id is the session id it created. Content capture is on
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY).
"""

import asyncio
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from the web
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

from conversation_scenarios import Turn, capture_conversations, current
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from scenarios import travel_tools

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("travel-service")
CALLS = [0]  # model calls of the turn being served (ADK's before_model_callback, not the spans)


def count_call(callback_context, llm_request):
    CALLS[0] += 1


agent = LlmAgent(
    name="travel_agent",
    model=LiteLlm(model="openai/gpt-4o-mini", api_base=os.environ["OPENAI_BASE_URL"]),
    instruction="You are a travel assistant.",
    tools=travel_tools(current),
    before_model_callback=count_call,
)
runner = InMemoryRunner(agent=agent, app_name="travel")


async def new_session():
    session = await runner.session_service.create_session(app_name="travel", user_id="u1")
    return session.id, session.id


async def serve(session_id: str, request: str) -> Turn:
    CALLS[0] = 0
    answer = None
    async for event in runner.run_async(
        user_id="u1", session_id=session_id, new_message=types.Content(role="user", parts=[types.Part(text=request)])
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text or "" for p in event.content.parts)
    return Turn(answer, CALLS[0])


asyncio.run(
    capture_conversations(
        serve,
        new_session,
        flush=provider.force_flush,
        tracer=tracer,
        agent_name="travel_agent",
        id_attribute="gen_ai.conversation.id",
    )
)
