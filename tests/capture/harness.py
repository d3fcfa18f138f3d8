"""Capture real framework traces: a scripted OpenAI-compatible model and an OTLP/HTTP recorder on 127.0.0.1.

    python tests/capture/harness.py langgraph-openinference      # one framework
    python tests/capture/harness.py --all                        # every folder with a manifest.json

Each framework lives in `tests/capture/<source>/` with a `manifest.json`, its pinned dependencies
(`requirements.txt` for Python, `package.json` + lock for Node) and a capture script. The harness
builds the framework's own environment (`.capture-envs/<source>`, never committed), starts both
servers, and runs the script with:

    OPENAI_BASE_URL / OPENAI_API_KEY     the scripted model (chat completions, streamed or not)
    ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY   the same script as the Anthropic Messages API (/v1/messages)
    OTEL_EXPORTER_OTLP_ENDPOINT          the recorder (OTLP/HTTP; traces and logs)
    CAPTURE_HARNESS_URL                  the control API below

The script drives one scenario at a time through the control API (see `client.py`/`client.mjs`):

    POST /_harness/begin {"scenario": "happy", "replies": [reply, ...]}
    ... run the agent, force-flush the SDK's providers ...
    POST /_harness/end   {"runs": [ground truth of each run, in order]}

A reply is {"text": "..."} or {"tool_calls": [{"name", "arguments"}]} or {"error": 500, "message": "..."}
(an error reply stays: every later request fails too, as with a backend that is down), optionally with
"usage": [prompt_tokens, completion_tokens]. Every OTLP request received between begin and end is
written verbatim (gzip undone) to `<out>/<source>/<scenario>/NNNN.pb` (`.logs.pb` for logs,
`.json`/`.logs.json` for OTLP/JSON), with a readable `dump/<scenario>.txt`; the runs' ground truth
and the trace ids go to `<out>/<source>/expected.json`, in the layout of the shared fixtures.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "frameworks"
ENVS = ROOT / ".capture-envs"


class Harness:
    """The two servers and the state of the scenario being captured."""

    def __init__(self, out: Path, source: str, describe: str) -> None:
        self.out = out / source
        self.describe = describe
        self.scenario: str | None = None
        self.replies: list[dict[str, Any]] = []
        self.script: list[dict[str, Any]] = []
        self.model_requests: list[dict[str, Any]] = []
        self.captured: list[tuple[str, bytes]] = []  # (file suffix, body)
        self.expected: dict[str, Any] = {"source": describe, "scenarios": {}}
        self.problems: list[str] = []
        self._ids = itertools.count(1)

    # --- control API ---------------------------------------------------------------------

    async def begin(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.scenario = body["scenario"]
        self.replies = list(body.get("replies", []))
        self.script = list(self.replies)
        self.model_requests = []
        self.captured = []
        return web.json_response({"ok": True})

    async def end(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self.scenario is None:
            return web.json_response({"error": "end without begin"}, status=400)
        await asyncio.sleep(float(body.get("settle", 0.5)))  # exporters that flush asynchronously
        scenario, runs = self.scenario, body["runs"]
        for run in runs:
            _in_request_order(run["tool_calls"], self.script)
        unused = [r for r in self.replies if "error" not in r]
        if unused:
            self.problems.append(f"{scenario}: {len(unused)} scripted replies were never asked for")
        folder = self.out / scenario
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        trace_ids: list[str] = []
        lines: list[str] = []
        for n, (suffix, data) in enumerate(self.captured):
            (folder / f"{n:04d}{suffix}").write_bytes(data)
            ids, text = _describe(suffix, data)
            trace_ids.extend(t for t in ids if t not in trace_ids)
            lines.append(f"# request {n:04d}{suffix}\n{text}")
        (self.out / "dump").mkdir(parents=True, exist_ok=True)
        (self.out / "dump" / f"{scenario}.txt").write_text("\n".join(lines))
        if not self.captured:
            self.problems.append(f"{scenario}: no OTLP request arrived")
        self.expected["scenarios"][scenario] = {
            "trace_ids": body.get("trace_ids") or trace_ids,
            "model_requests": len(self.model_requests),
            "runs": runs,
            **{key: body[key] for key in ("nested_runs_allowed", "note", "conversations") if key in body},
        }
        self.scenario = None
        return web.json_response({"ok": True, "requests": len(self.captured), "trace_ids": trace_ids})

    # --- OTLP recorder -------------------------------------------------------------------

    async def otlp(self, request: web.Request) -> web.Response:
        signal = request.match_info["signal"]
        data = await request.read()
        if request.headers.get("Content-Encoding", "").lower() == "gzip":
            data = gzip.decompress(data)
        is_json = request.content_type == "application/json"
        suffix = (".logs" if signal == "logs" else "") + (".json" if is_json else ".pb")
        if self.scenario is None:
            self.problems.append(f"an OTLP {signal} request arrived outside any scenario (dropped)")
        else:
            self.captured.append((suffix, data))
        if is_json:
            return web.json_response({})
        return web.Response(body=b"", content_type="application/x-protobuf")

    # --- scripted model ------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The scripted reply to one model request: a reply, or {"error": status, "message": ...}."""
        self.model_requests.append(body)
        if not self.replies:
            self.problems.append(f"{self.scenario}: model asked for more replies than scripted")
            return {"error": 500, "message": "capture harness: no scripted reply left for this scenario"}
        # a failed backend stays failed: the client's retries see it too
        return self.replies[0] if "error" in self.replies[0] else self.replies.pop(0)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        reply = self._next_reply(body)
        if "error" in reply:
            error = {"error": {"message": reply.get("message", "scripted failure"), "type": "server_error"}}
            return web.json_response(error, status=int(reply["error"]))
        n = next(self._ids)
        calls = [
            {
                "id": call.get("id") or f"call_{n}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for i, call in enumerate(reply.get("tool_calls", []))
        ]
        finish = "tool_calls" if calls else "stop"
        prompt_tokens, completion_tokens = reply.get("usage", (50 + 10 * len(self.model_requests), 12))
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        head = {"id": f"chatcmpl-capture-{n}", "created": int(time.time()), "model": body.get("model", "scripted")}
        if body.get("stream"):
            return await _stream(request, head, reply.get("text"), calls, finish, usage, body)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        if calls:
            message["tool_calls"] = calls
        completion = {
            **head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }
        return web.json_response(completion)

    async def anthropic_messages(self, request: web.Request) -> web.StreamResponse:
        """The same script played as the Anthropic Messages API: text and `tool_use` content blocks; the
        next request answers them with `tool_result` blocks (recorded like any request)."""
        body = await request.json()
        reply = self._next_reply(body)
        if "error" in reply:
            error = {
                "type": "error",
                "error": {"type": "api_error", "message": reply.get("message", "scripted failure")},
            }
            return web.json_response(error, status=int(reply["error"]))
        n = next(self._ids)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": reply["text"]}] if reply.get("text") else []
        blocks += [
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{n}_{i}",
                "name": call["name"],
                "input": json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"],
            }
            for i, call in enumerate(reply.get("tool_calls", []))
        ]
        input_tokens, output_tokens = reply.get("usage", (50 + 10 * len(self.model_requests), 12))
        message = {
            "id": f"msg_capture_{n}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": blocks,
            "stop_reason": "tool_use" if reply.get("tool_calls") else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
        if body.get("stream"):
            return await _stream_anthropic(request, message)
        return web.json_response(message)

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/_harness/begin", self.begin)
        app.router.add_post("/_harness/end", self.end)
        app.router.add_post("/v1/{signal:traces|logs}", self.otlp)
        app.router.add_post("/api/public/otel/v1/{signal:traces}", self.otlp)  # Langfuse SDK exporter path
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.router.add_post("/chat/completions", self.chat_completions)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/messages", self.anthropic_messages)
        return app


async def _stream(
    request: web.Request,
    head: dict[str, Any],
    text: str | None,
    calls: list[dict[str, Any]],
    finish: str,
    usage: dict[str, int],
    body: dict[str, Any],
) -> web.StreamResponse:
    """Answer as server-sent events, the way the OpenAI API streams a chat completion."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)

    async def send(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> None:
        chunk = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
            **extra,
        }
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

    await send({"role": "assistant", "content": ""})
    if text:
        for i in range(0, len(text), 16):
            await send({"content": text[i : i + 16]})
    for index, call in enumerate(calls):
        function = call["function"]
        await send(
            {
                "tool_calls": [
                    {"index": index, "id": call["id"], "type": "function", "function": {"name": function["name"]}}
                ]
            }
        )
        await send({"tool_calls": [{"index": index, "function": {"arguments": function["arguments"]}}]})
    await send({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        chunk = {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _stream_anthropic(request: web.Request, message: dict[str, Any]) -> web.StreamResponse:
    """Answer as server-sent events, the way the Anthropic Messages API streams a message."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)

    async def send(event: str, data: dict[str, Any]) -> None:
        await response.write(f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode())

    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    await send("message_start", {"message": start})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            await send("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            for i in range(0, len(block["text"]), 16):
                delta = {"type": "text_delta", "text": block["text"][i : i + 16]}
                await send("content_block_delta", {"index": index, "delta": delta})
        else:
            await send("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            await send("content_block_delta", {"index": index, "delta": delta})
        await send("content_block_stop", {"index": index})
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    await send("message_delta", {"delta": stop, "usage": {"output_tokens": usage["output_tokens"]}})
    await send("message_stop", {})
    await response.write_eof()
    return response


def _in_request_order(calls: list[dict[str, Any]], script: list[dict[str, Any]]) -> None:
    """Calls asked for in one model response (parallel calls) are listed in the order the model asked for
    them, whichever finished first; every other call keeps its place."""
    for reply in script:
        asked = [(c["name"], json.dumps(c["arguments"], sort_keys=True)) for c in reply.get("tool_calls", [])]
        if len(asked) < 2:
            continue
        keys = [(c["name"], json.dumps(c["arguments"], sort_keys=True)) for c in calls]
        places = [i for i, key in enumerate(keys) if key in asked]
        if sorted(keys[i] for i in places) != sorted(asked):
            continue  # not this response's calls (or not all of them ran)
        ordered = sorted(
            (calls[i] for i in places),
            key=lambda c: asked.index((c["name"], json.dumps(c["arguments"], sort_keys=True))),
        )
        for i, call in zip(places, ordered, strict=True):
            calls[i] = call


def _describe(suffix: str, data: bytes) -> tuple[list[str], str]:
    """Trace ids in one captured request, and a readable line per span or log record."""
    if suffix.endswith(".json"):
        return [], data.decode("utf-8", "replace")
    lines: list[str] = []
    ids: list[str] = []
    if suffix == ".logs.pb":
        logs = logs_service_pb2.ExportLogsServiceRequest.FromString(data)
        for rl in logs.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    lines.append(
                        f"log trace={record.trace_id.hex()} span={record.span_id.hex()} "
                        f"event={record.event_name!r} scope={sl.scope.name}"
                    )
                    lines.extend(f"    {a.key} = {_value(a.value)}" for a in record.attributes)
                    lines.append(f"    body = {_value(record.body)}")
        return ids, "\n".join(lines)
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(data)
    for rs in request.resource_spans:
        service = next((a.value.string_value for a in rs.resource.attributes if a.key == "service.name"), "")
        for ss in rs.scope_spans:
            for s in ss.spans:
                trace = s.trace_id.hex()
                if trace not in ids:
                    ids.append(trace)
                lines.append(
                    f"{trace} {s.span_id.hex()} parent={s.parent_span_id.hex() or '-'} {s.name!r} "
                    f"kind={s.kind} status={s.status.code}:{s.status.message!r} scope={ss.scope.name} "
                    f"service={service}"
                )
                lines.extend(f"    {a.key} = {_value(a.value)}" for a in s.attributes)
                for event in s.events:
                    lines.append(f"    event {event.name!r}")
                    lines.extend(f"        {a.key} = {_value(a.value)}" for a in event.attributes)
    return ids, "\n".join(lines)


def _value(value: Any) -> str:
    kind = value.WhichOneof("value")
    if kind is None:
        return "<empty>"
    if kind == "array_value":
        return "[" + ", ".join(_value(v) for v in value.array_value.values) + "]"
    if kind == "kvlist_value":
        return "{" + ", ".join(f"{kv.key}: {_value(kv.value)}" for kv in value.kvlist_value.values) + "}"
    raw = getattr(value, kind)
    text = repr(raw)
    return text if len(text) <= 2000 else text[:2000] + f"... ({len(text)} chars)"


# --- running one framework -----------------------------------------------------------------


def prepare_env(folder: Path, manifest: dict[str, Any]) -> list[str]:
    """Build the framework's own environment (pinned versions) and return the command that captures."""
    entry = manifest["entry"]
    if manifest.get("language", "python") == "node":
        if not (folder / "node_modules").exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder, check=True)
        return ["node", entry]
    env_dir = ENVS / folder.name
    python = env_dir / "bin" / "python"
    stamp = env_dir / ".requirements"
    requirements = (folder / "requirements.txt").read_text()
    if not python.exists() or not stamp.exists() or stamp.read_text() != requirements:
        subprocess.run([manifest.get("python", sys.executable), "-m", "venv", "--clear", str(env_dir)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", "requirements.txt"], cwd=folder, check=True)
        stamp.write_text(requirements)
    return [str(python), entry]


async def capture(folder: Path, out: Path) -> list[str]:
    manifest = json.loads((folder / "manifest.json").read_text())
    command = prepare_env(folder, manifest)
    harness = Harness(out, manifest["source"], manifest["describe"])
    runner = web.AppRunner(harness.app(), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"{base}/v1",
        "OPENAI_API_BASE": f"{base}/v1",
        "OPENAI_API_KEY": "sk-capture-harness",
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": "sk-ant-capture-harness",
        "OTEL_EXPORTER_OTLP_ENDPOINT": base,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "CAPTURE_HARNESS_URL": base,
        "CAPTURE_CLIENT_DIR": str(HERE),
        "PYTHONPATH": str(HERE),
    }
    try:
        process = await asyncio.create_subprocess_exec(*command, cwd=folder, env=env)
        code = await process.wait()
    finally:
        await runner.cleanup()
    if code != 0:
        harness.problems.append(f"capture script exited {code}")
    harness.out.mkdir(parents=True, exist_ok=True)
    (harness.out / "expected.json").write_text(json.dumps(harness.expected, indent=1, ensure_ascii=False) + "\n")
    return harness.problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="framework folders under tests/capture/")
    parser.add_argument("--all", action="store_true", help="every folder with a manifest.json")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    names = sorted(p.parent.name for p in HERE.glob("*/manifest.json")) if args.all else args.sources
    if not names:
        parser.error("name a framework folder, or --all")
    failed = 0
    for name in names:
        print(f"== {name}", flush=True)
        problems = asyncio.run(capture(HERE / name, args.out))
        for problem in problems:
            print(f"   problem: {problem}")
        failed += bool(problems)
    print(f"{len(names) - failed}/{len(names)} captured without problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
