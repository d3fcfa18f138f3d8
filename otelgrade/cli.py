"""The `otelgrade` command: serve, grade, trajectories, check-config."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from otelgrade.config import Config, load_config
from otelgrade.errors import ConfigError, InputError
from otelgrade.metrics import Metrics
from otelgrade.results import Grade
from otelgrade.trajectory import Trajectory

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="otelgrade", description="Grade AI agent runs from OpenTelemetry traces.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="receive OTLP traces and logs, grade every run, export metrics")
    serve.add_argument("--config", help="otelgrade.yaml (default: the embedded default config)")

    grade = commands.add_parser("grade", help="grade captured traces offline (exit 0 all passed, 1 some failed)")
    grade.add_argument("--config", help="otelgrade.yaml or a reference system's config (default: embedded)")
    grade.add_argument("--format", choices=["text", "json"], default="text")
    grade.add_argument("inputs", nargs="+", metavar="INPUT", help="OTLP .pb/.json/.jsonl, trajectory JSON, or dirs")

    trajectories = commands.add_parser("trajectories", help="print the runs rebuilt from captured traces")
    trajectories.add_argument("--format", choices=["json", "text"], default="json")
    trajectories.add_argument("inputs", nargs="+", metavar="INPUT")

    check = commands.add_parser("check-config", help="validate a config file (exit 2 with the reason)")
    check.add_argument("config")

    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            from otelgrade.server import run

            return run(args.config)
        if args.command == "check-config":
            return _check_config(args.config)
        if args.command == "trajectories":
            return _trajectories(args.inputs, args.format, sys.stdout)
        return _grade(args.config, args.inputs, args.format, sys.stdout)
    except (ConfigError, InputError) as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK


def _check_config(path: str) -> int:
    config = load_config(path)
    graders = sum(len(s.graders) for s in config.suites)
    print(f"{path}: ok ({len(config.suites)} suite(s), {graders} grader(s))")
    return EXIT_OK


def _trajectories(inputs: Sequence[str], fmt: str, out: TextIO) -> int:
    from otelgrade.offline import read_inputs

    count = 0
    for trajectory in read_inputs(inputs):
        count += 1
        if fmt == "json":
            out.write(trajectory.model_dump_json() + "\n")
        else:
            tools = ", ".join(c.name for c in trajectory.tool_calls) or "-"
            out.write(
                f"{trajectory.trace_id} {trajectory.agent_name or '-'} [{trajectory.source}] {trajectory.status} "
                f"llm={len(trajectory.llm_calls)} tools={tools}\n  input: {_short(trajectory.input)}\n"
                f"  output: {_short(trajectory.output)}\n"
            )
    if count == 0:
        raise InputError(f"no agent runs found in {' '.join(inputs)}")
    return EXIT_OK


def _grade(config_path: str | None, inputs: Sequence[str], fmt: str, out: TextIO) -> int:
    from otelgrade.offline import read_inputs

    config = load_config(config_path)
    trajectories = list(read_inputs(inputs))
    if not trajectories:
        raise InputError(f"no agent runs found in {' '.join(inputs)}")
    runs = asyncio.run(_grade_all(config, trajectories))
    grades = [g for _, run_grades in runs for g in run_grades]
    if fmt == "json":
        for g in grades:
            out.write(json.dumps(g.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_report(runs, out)
    return EXIT_FAILED if any(g.outcome in ("fail", "error") for g in grades) else EXIT_OK


async def _grade_all(config: Config, trajectories: list[Trajectory]) -> list[tuple[Trajectory, list[Grade]]]:
    """Grade every run as the server would, with judges' answers awaited."""
    from otelgrade.export import Exporter
    from otelgrade.grading import Grading, Suite
    from otelgrade.judges.runner import JudgeRunner

    metrics = Metrics()
    grading = Grading([Suite.build(s.name, s.match, s.graders) for s in config.suites], Exporter(metrics), metrics)
    judges = JudgeRunner(config.judge, metrics)
    await judges.start(grading.judge_graders())
    grading.install([Suite.build(s.name, s.match, s.graders, judges) for s in config.suites])
    try:
        return [(t, await grading.grade_and_wait(t)) for t in trajectories]
    finally:
        await judges.close()


def _print_report(runs: list[tuple[Trajectory, list[Grade]]], out: TextIO) -> None:
    marks = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skipped": "SKIP"}
    for trajectory, grades in runs:
        out.write(
            f"run {trajectory.trace_id}/{trajectory.span_id}  agent={trajectory.agent_name or '-'}  "
            f"status={trajectory.status}\n"
        )
        if not grades:
            out.write("    (no suite matched this run)\n")
        width = max((len(f"{g.suite}/{g.grader}") for g in grades), default=0)
        for g in grades:
            score = "-" if g.score is None else f"{g.score:.2f}"
            out.write(
                f"    {marks[g.outcome]:<5} {f'{g.suite}/{g.grader}':<{width}}  {score:>5}  {_short(g.rationale)}\n"
            )
    totals: Counter[tuple[str, str]] = Counter()
    for _, grades in runs:
        for g in grades:
            totals[(f"{g.suite}/{g.grader}", g.outcome)] += 1
    out.write("\nsummary (pass rate = pass / (pass + fail); errors and skips are not failures)\n")
    names = sorted({name for name, _ in totals})
    width = max((len(n) for n in names), default=0)
    for name in names:
        p, f, e, s = (totals[(name, o)] for o in ("pass", "fail", "error", "skipped"))
        rate = f"{p / (p + f):6.1%}" if p + f else "     -"
        out.write(f"  {name:<{width}}  {rate}  pass={p} fail={f} error={e} skipped={s}\n")
    all_grades = [g for _, gs in runs for g in gs]
    failed = sum(g.outcome == "fail" for g in all_grades)
    errored = sum(g.outcome == "error" for g in all_grades)
    out.write(f"\n{len(runs)} run(s), {len(all_grades)} grade(s): {failed} failed, {errored} error(s)\n")


def _short(text: str | None, limit: int = 100) -> str:
    if text is None:
        return "-"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":
    sys.exit(main())
