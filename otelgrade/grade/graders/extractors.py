"""letta-evals extractors: pick the text a grader judges (the "submission") out of a `Trajectory`.

Each extractor is a plain function in a registry, so any grader (tool graders, rubric judges) can
take `extractor:` and `extractor_config:`; `check_extractor` validates a config at load time and
`extract` runs one. Semantics follow letta-evals 0.26 exactly, on a trace's terms:

- Turns. letta groups a conversation into turns. A message's `turn` key, when present, names its
  turn (a message without one stays in the turn before it); otherwise each user message opens a
  new turn. Tool calls belong to the turn of the message that carries their `call_id` (an
  assistant `tool_calls[].id` or a tool message's `tool_call_id`), else to the last turn. An LLM
  call belongs to the turn given by the number of user messages in its `input_messages`. Messages
  of other roles (system, developer) only mark that a turn exists; they are not content.
- "Assistant message" means an assistant message with text; one that only carries tool calls is a
  tool-call message, as in letta.
- `memory_block`: a trace has no Letta agent state, so blocks are read from the run's attributes:
  `letta.memory.<label>` or `memory.<label>` (flat attributes), or a mapping `letta.memory` of
  label -> value. A run with none of these has no memory at all, which is an error, as in letta.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError
from otelgrade.core.registry import Registry
from otelgrade.core.trajectory import LLMCall, Part, ToolCall, Trajectory, content_text

Config = Mapping[str, Any]
ExtractFn = Callable[[Trajectory, Config], "str | None"]


class ExtractionError(RuntimeError):
    """The run lacks what the extractor needs (e.g. no memory blocks); the grade is an `error`."""


@dataclass(frozen=True)
class Extractor:
    """A registered extractor: the function, and the check of its config at load time."""

    extract: ExtractFn
    check: Callable[[Config], None] | None = None
    reads: tuple[Part, ...] = ("messages",)


EXTRACTORS: Registry[Extractor] = Registry("extractor", key="extractor")


def extractor(
    name: str, check: Callable[[Config], None] | None = None, reads: tuple[Part, ...] = ("messages",)
) -> Callable[[ExtractFn], ExtractFn]:
    """Register an extractor function, the check that validates its config at load time, and the parts of a
    run it reads (the messages, unless it reads tool calls or memory)."""

    def register(fn: ExtractFn) -> ExtractFn:
        EXTRACTORS.add(name, Extractor(fn, check, reads))
        return fn

    return register


def list_extractors() -> list[str]:
    return EXTRACTORS.names()


def check_extractor(name: str, config: Config | None = None) -> None:
    """Raise `ConfigError` when `name` is unknown or `config` would make it fail on every run."""
    check = EXTRACTORS.get(name).check
    if check is not None:
        check(config or {})


def extractor_reads(name: str | None) -> frozenset[Part]:
    """The parts of a run an extractor reads (an unknown one: the messages; it fails at load anyway)."""
    key = name or "last_assistant"
    return frozenset(EXTRACTORS.get(key).reads if key in EXTRACTORS else ("messages",))


def extract(trajectory: Trajectory, name: str = "last_assistant", config: Config | None = None) -> str | None:
    """The submission `name` extracts from `trajectory` ("" or None when there is nothing)."""
    check_extractor(name, config)
    return EXTRACTORS.get(name).extract(trajectory, config or {})


# --- turns -------------------------------------------------------------------------------------

_CONTENT_ROLES = {"user", "assistant", "tool"}


def is_assistant_text(message: Mapping[str, Any]) -> bool:
    """An assistant message with text (one that only carries tool calls is not)."""
    if message.get("role") != "assistant":
        return False
    return not (message.get("tool_calls") and not content_text(message.get("content")))


def message_turns(messages: list[dict[str, Any]]) -> list[int]:
    """The turn index of each message (see the module docstring)."""
    keyed = any(isinstance(m.get("turn"), int) for m in messages)
    turns: list[int] = []
    current, seen_content = 0, False
    for m in messages:
        if keyed:
            if isinstance(m.get("turn"), int):
                current = m["turn"]
        elif m.get("role") == "user":
            if seen_content:
                current += 1
            seen_content = True
        elif m.get("role") in _CONTENT_ROLES:
            seen_content = True
        turns.append(current)
    return turns


def split_turns(trajectory: Trajectory) -> list[Trajectory]:
    """The run as one `Trajectory` per turn (one turn: the run itself).

    A turn's output is the text of its last assistant message; the last turn keeps the run's
    output and status. Turns with nothing in them are empty trajectories.
    """
    msgs = trajectory.messages
    turn_of = message_turns(msgs)
    count = max(turn_of, default=-1) + 1
    if count <= 1:
        return [trajectory] if msgs or trajectory.tool_calls or trajectory.llm_calls else []
    call_turn: dict[str, int] = {}
    for m, t in zip(msgs, turn_of, strict=True):
        for tc in m.get("tool_calls") or []:
            if isinstance(tc, Mapping) and tc.get("id"):
                call_turn.setdefault(str(tc["id"]), t)
        if m.get("role") == "tool" and m.get("tool_call_id"):
            call_turn.setdefault(str(m["tool_call_id"]), t)
    tools: list[list[ToolCall]] = [[] for _ in range(count)]
    for call in trajectory.tool_calls:
        tools[call_turn.get(call.call_id or "", count - 1)].append(call)
    llm: list[list[LLMCall]] = [[] for _ in range(count)]
    for lc in trajectory.llm_calls:
        n_users = sum(1 for m in lc.input_messages if m.get("role") == "user")
        llm[min(max(n_users - 1, 0), count - 1) if lc.input_messages else count - 1].append(lc)
    out = []
    for i in range(count):
        turn_msgs = [m for m, t in zip(msgs, turn_of, strict=True) if t == i]
        texts = [content_text(m.get("content")) for m in turn_msgs if is_assistant_text(m)]
        last = i == count - 1
        users = [content_text(m.get("content")) for m in turn_msgs if m.get("role") == "user"]
        out.append(
            trajectory.model_copy(
                update={
                    "messages": turn_msgs,
                    "tool_calls": tools[i],
                    "llm_calls": llm[i],
                    "steps": len(llm[i]),
                    "input": users[0] if users else None,
                    "output": trajectory.output if last else (texts[-1] if texts else None),
                    "status": trajectory.status if last else "ok",
                    "error": trajectory.error if last else None,
                }
            )
        )
    return out


def is_empty(trajectory: Trajectory) -> bool:
    """letta's "Empty trajectory": no turn holds any message (tool calls count as messages)."""
    return not trajectory.tool_calls and not any(m.get("role") in _CONTENT_ROLES for m in trajectory.messages)


def _assistant_texts(trajectory: Trajectory) -> list[str]:
    return [content_text(m.get("content")) for m in trajectory.messages if is_assistant_text(m)]


# --- the extractors ----------------------------------------------------------------------------


def _require(config: Config, key: str, error: type[Exception] = ConfigError) -> Any:
    if key not in config:
        raise error(f"extractor_config needs {key!r}")
    return config[key]


@extractor("last_assistant")
def last_assistant(trajectory: Trajectory, config: Config) -> str:
    """The last assistant message of the run (earlier turns when the last has none)."""
    texts = _assistant_texts(trajectory)
    return texts[-1] if texts else ""


@extractor("first_assistant")
def first_assistant(trajectory: Trajectory, config: Config) -> str:
    texts = _assistant_texts(trajectory)
    return texts[0] if texts else ""


@extractor("all_assistant")
def all_assistant(trajectory: Trajectory, config: Config) -> str:
    """Every assistant message joined with `separator` (default a newline); empty ones too."""
    return str(config.get("separator", "\n")).join(_assistant_texts(trajectory))


@extractor("last_turn")
def last_turn(trajectory: Trajectory, config: Config) -> str:
    """The assistant messages of the last turn only ("" when that turn has none)."""
    msgs = trajectory.messages
    turn_of = message_turns(msgs)
    last = max(turn_of, default=0)
    texts = [
        content_text(m.get("content")) for m, t in zip(msgs, turn_of, strict=True) if t == last and is_assistant_text(m)
    ]
    return str(config.get("separator", "\n")).join(texts)


def _check_pattern(config: Config) -> None:
    pattern = _require(config, "pattern")
    try:
        compiled = Pattern(str(pattern))
    except PatternError as exc:
        raise ConfigError(f"invalid regex {pattern!r}: {exc}", "extractor_config.pattern") from None
    group = config.get("group", 0)
    if isinstance(group, bool) or not isinstance(group, int):
        raise ConfigError(f"group must be an integer, not {group!r}", "extractor_config.group")
    groups = compiled.groups
    if config.get("search_all") and groups >= 2:
        ok = -groups <= group < groups  # findall's tuple is indexed 0-based
    else:
        ok = config.get("search_all") or 0 <= group <= groups
    if not ok:
        raise ConfigError(f"group {group} does not exist in {pattern!r} ({groups} groups)", "extractor_config.group")


@extractor("pattern", _check_pattern)
def pattern(trajectory: Trajectory, config: Config) -> str | None:
    """The first regex match in the newest assistant message that has one.

    With `search_all`, every match of that message joined by a space: with no or one capture
    group the match (or the group) texts, with several the 0-based `group` of each match tuple.
    """
    compiled = Pattern(str(config["pattern"]))
    group = int(config.get("group", 0))
    for text in reversed(_assistant_texts(trajectory)):
        if config.get("search_all"):
            found = compiled.findall(text)
            if found:
                return " ".join(m[group] if isinstance(m, tuple) else m for m in found)
        else:
            match = compiled.search(text)
            if match:
                value = match.group(group)
                return value if value is None else str(value)
    return ""


def _check_tool_name(config: Config) -> None:
    _require(config, "tool_name")


def arguments_text(arguments: Any) -> str:
    """Tool arguments as letta shows them: a string as is, anything else as JSON."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


@extractor("tool_arguments", _check_tool_name, reads=("tool_arguments",))
def tool_arguments(trajectory: Trajectory, config: Config) -> str:
    """The arguments of the first call to `tool_name`; the literal "{}" when it was never called."""
    for call in trajectory.tool_calls:
        if call.name == config["tool_name"]:
            return arguments_text(call.arguments)
    return "{}"


@extractor("tool_output", _check_tool_name, reads=("tool_results",))
def tool_output(trajectory: Trajectory, config: Config) -> str:
    """What the first call to `tool_name` returned ("" when it was not called or returned nothing)."""
    for call in trajectory.tool_calls:
        if call.name == config["tool_name"]:
            return call.result or ""
    return ""


def _check_marker(config: Config) -> None:
    _require(config, "marker")


@extractor("after_marker", _check_marker)
def after_marker(trajectory: Trajectory, config: Config) -> str:
    """Text after the first `marker` in the newest assistant message containing it, stripped."""
    marker = str(config["marker"])
    for text in reversed(_assistant_texts(trajectory)):
        at = text.find(marker)
        if at >= 0:
            return text[at if config.get("include_marker") else at + len(marker) :].strip()
    return ""


def _check_block_label(config: Config) -> None:
    _require(config, "block_label")


def memory_blocks(trajectory: Trajectory) -> dict[str, str] | None:
    """The run's memory blocks by label, or None when the run carries no memory at all."""
    attrs = trajectory.attributes
    blocks: dict[str, str] | None = None
    nested = attrs.get("letta.memory")
    if isinstance(nested, Mapping):
        blocks = {str(k): "" if v is None else str(v) for k, v in nested.items()}
    for prefix in ("memory.", "letta.memory."):
        for key, value in attrs.items():
            if key.startswith(prefix):
                blocks = blocks if blocks is not None else {}
                blocks[key[len(prefix) :]] = "" if value is None else str(value)
    return blocks


@extractor("memory_block", _check_block_label, reads=())
def memory_block(trajectory: Trajectory, config: Config) -> str:
    """The value of the memory block labelled `block_label` (exact match; "" when absent)."""
    blocks = memory_blocks(trajectory)
    if blocks is None:
        raise ExtractionError(
            "memory_block needs the run's memory: set letta.memory.<label> attributes on the agent span or resource"
        )
    return blocks.get(str(config["block_label"]), "")
