"""A DSPy program of two `dspy.ReAct` modules in sequence, traced by openinference-instrumentation-dspy: `intake`
(`complaint -> case_summary`; lookup_order, check_warranty) sums a customer's complaint up, and `resolver`
(`case_summary -> reply`; ship_replacement, which fails, refund_order, delete_account) is given that summary and
writes the reply. No span but the program's own (`ReturnsDesk.forward`) holds both; nothing transfers control.

`dspy.LM` talks to the scripted model through DSPy's chat adapter: every ReAct step is one chat completion whose
text holds `next_thought`, `next_tool_name` and `next_tool_args`; after the model picks ReAct's built-in `finish`
(which only marks the end, and is no tool call) one more call extracts the module's output field. The response
cache and retries are off, so every step is one request to the model. Each request runs in a `handle_request` span.

The ground truth is one request run per request, the program's: the complaint, the reply, both modules' model
calls (DSPy's own `on_lm_start` callback), the tool calls as the tools really ran them, and no handoff (a
pipeline's next step, as in the sequential orchestrations). In `resolver_backend_down` the model backend fails
during the resolver's turn, after the intake module finished, and the program raises.
"""

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM reads its bundled price list, offline

import dspy
from client import Scenario, each, failure
from dspy_lm import ModelCalls, configure
from openinference.instrumentation.dspy import DSPyInstrumentor
from telemetry import flush, traced

tracer = traced("returns-desk", lambda: [DSPyInstrumentor()])
S: Scenario  # the scenario being captured; the tools record into its request run

configure()


def lookup_order(order_id: str) -> str:
    """An order: what was bought, when, and for how much."""
    return S.ran("lookup_order", {"order_id": order_id}, f"{order_id}: noise-cancelling headphones, 14 May, 249 EUR")


def check_warranty(order_id: str) -> str:
    """Whether an order's item is still under warranty."""
    return S.ran("check_warranty", {"order_id": order_id}, f"{order_id}: under warranty until 14 May next year")


def ship_replacement(order_id: str) -> str:
    """Ship a replacement of an order's item."""
    return S.ran("ship_replacement", {"order_id": order_id}, error="warehouse has no stock of this item")


def refund_order(order_id: str, amount: int) -> str:
    """Refund an order, in euros."""
    return S.ran("refund_order", {"order_id": order_id, "amount": amount}, f"refund RF-118 of {amount} EUR issued")


def delete_account(user_id: str) -> str:
    """Delete a customer's account."""
    return S.ran("delete_account", {"user_id": user_id}, f"account {user_id} deleted")


class ReturnsDesk(dspy.Module):
    """The intake module's summary is the resolver's input; the resolver's reply is the program's answer."""

    def __init__(self) -> None:
        super().__init__()
        self.intake = dspy.ReAct("complaint -> case_summary", tools=[lookup_order, check_warranty])
        self.resolver = dspy.ReAct("case_summary -> reply", tools=[ship_replacement, refund_order, delete_account])

    def forward(self, complaint: str) -> dspy.Prediction:
        summary = self.intake(complaint=complaint).case_summary
        return self.resolver(case_summary=summary)


def step(tool_name: str, arguments: dict) -> dict:
    """One ReAct step as the chat adapter expects the model to write it."""
    thought = "I have what I need." if tool_name == "finish" else f"I will call {tool_name}."
    fields = {"next_thought": thought, "next_tool_name": tool_name, "next_tool_args": json.dumps(arguments)}
    return {"text": "".join(f"[[ ## {k} ## ]]\n{v}\n\n" for k, v in fields.items()) + "[[ ## completed ## ]]"}


def output(field: str, text: str) -> list[dict]:
    """The module's last two replies: `finish`, then the extraction call (ChainOfThought's reasoning, the field)."""
    extract = f"[[ ## reasoning ## ]]\nFrom the trajectory.\n\n[[ ## {field} ## ]]\n{text}\n\n[[ ## completed ## ]]"
    return [step("finish", {}), {"text": extract}]


SUMMARY = "Order O-5521 (headphones, 249 EUR) is faulty and under warranty."
SCENARIOS = {
    "refund_after_intake": (
        "My headphones from order O-5521 stopped working; I want my money back.",
        [
            step("lookup_order", {"order_id": "O-5521"}),
            step("check_warranty", {"order_id": "O-5521"}),
            *output("case_summary", SUMMARY),
            step("refund_order", {"order_id": "O-5521", "amount": 249}),
            *output("reply", "Your refund RF-118 of 249 EUR for order O-5521 is on its way."),
        ],
    ),
    "replacement_out_of_stock": (
        "Order O-5521 arrived broken; please send me a new pair.",
        [
            step("check_warranty", {"order_id": "O-5521"}),
            *output("case_summary", SUMMARY + " The customer wants a replacement."),
            step("ship_replacement", {"order_id": "O-5521"}),
            *output("reply", "Sorry, we have no replacement in stock for order O-5521 yet; we can refund you instead."),
        ],
    ),
    "close_account": (
        "I never want to shop here again. Delete my account, customer c-881.",
        [
            *output("case_summary", "Customer c-881 asks for their account to be deleted."),
            step("delete_account", {"user_id": "c-881"}),
            *output("reply", "Your account c-881 has been deleted."),
        ],
    ),
    "resolver_backend_down": (
        "Refund my order O-5521, the headphones are faulty.",
        [
            step("lookup_order", {"order_id": "O-5521"}),
            *output("case_summary", SUMMARY),
            failure(500, "model backend unavailable"),
        ],
    ),
}

program = ReturnsDesk()
for S, request in each(SCENARIOS, nested_runs_allowed=True):  # S: the scenario the tools record into
    with tracer.start_as_current_span("handle_request"):
        truth = S.run("ReturnsDesk", request)
        truth.update(handoffs=[], nested_runs_allowed=True)
        ModelCalls.count = 0
        try:
            S.finish(program(complaint=request).reply, "ok", ModelCalls.count)
        except Exception as exc:
            print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
            S.finish(None, "error", ModelCalls.count)
        truth["note"] = (
            "The request run is the program's: the intake module's and the resolver's model and tool calls; the "
            "resolver is given the intake's case_summary (a pipeline's next step, no handoff)."
        )
    flush()
