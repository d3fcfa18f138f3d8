"""The `otelgrade` command: serve, grade, trajectories, check-config."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from otelgrade import __version__
from otelgrade.config import Config, load_config
from otelgrade.core.errors import ConfigError, InputError
from otelgrade.core.metrics import Metrics
from otelgrade.core.results import OUTCOMES, Grade
from otelgrade.core.trajectory import Conversation, Trajectory
from otelgrade.grade.graders.names import collecting as deprecated_spellings
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.identity import CONVERSATION_ID_ATTRIBUTES
from otelgrade.rebuild.mapping import mapped_dialects

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
FAILING = ("fail", "error")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="otelgrade", description="Grade AI agent runs from OpenTelemetry traces.")
    parser.add_argument("--version", action="version", version=f"otelgrade {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="receive OTLP traces and logs, grade every run, export metrics")
    serve.add_argument("--config", help="otelgrade.yaml (default: the embedded default config)")

    grade = commands.add_parser(
        "grade", help="grade captured traces offline (exit 0 all passed, 1 some failed, 2 bad input or no run matched)"
    )
    grade.add_argument("--config", help="otelgrade.yaml or a reference system's config (default: embedded)")
    grade.add_argument("--format", choices=["text", "json"], default="text")
    grade.add_argument("--failed-only", action="store_true", help="show only failed and errored grades (and runs)")
    grade.add_argument(
        "--judge-sample",
        type=_rate,
        metavar="RATE",
        help="the share of runs every judge grades, over the config's `sample` (1 judges every run)",
    )
    grade.add_argument(
        "--since",
        type=_duration,
        metavar="DURATION",
        help="only runs that ended within this long before now (24h, 90m, 7d): a backfill of an archive, read one "
        "trace at a time; damaged files are skipped and reported at the end",
    )
    grade.add_argument(
        "--strict", action="store_true", help="with --since: exit 2 when a damaged input file was skipped"
    )
    grade.add_argument(
        "--yes", action="store_true", help="judge without asking (the estimated calls and cost are still printed)"
    )
    grade.add_argument(
        "--compare",
        nargs=2,
        metavar=("OLD", "NEW"),
        help="grade with two configs and print, per grader, the verdicts that flipped and the agreement rate",
    )
    grade.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="OTLP .pb/.json/.jsonl (or .gz), trajectory JSON, or dirs"
    )

    trajectories = commands.add_parser("trajectories", help="print the runs rebuilt from captured traces")
    trajectories.add_argument("--format", choices=["json", "text"], default="json")
    trajectories.add_argument("--config", help="a config whose `rebuild.mappings` read unknown instrumentation")
    trajectories.add_argument("inputs", nargs="+", metavar="INPUT")

    inspect = commands.add_parser("inspect", help="show how each trace's spans were read (dialect, role, why)")
    inspect.add_argument("--config", help="a config whose `rebuild.mappings` read unknown instrumentation")
    inspect.add_argument("inputs", nargs="+", metavar="INPUT")

    check = commands.add_parser("check-config", help="validate a config file (exit 2 with the reason)")
    check.add_argument("config")

    agree = commands.add_parser(
        "agreement", help="how a config's graders agree with people's verdicts on the same runs (accuracy, kappa)"
    )
    agree.add_argument("--config", help="otelgrade.yaml whose graders to compare (default: embedded)")
    agree.add_argument("--human", required=True, metavar="FILE", help="CSV or JSON lines: trace_id, grader, verdict")
    agree.add_argument("--format", choices=["text", "json"], default="text")
    agree.add_argument("--yes", action="store_true", help="judge without asking")
    agree.add_argument("inputs", nargs="+", metavar="INPUT", help="the runs the people judged (as for grade)")

    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            from otelgrade.service.workers import run

            return run(args.config)
        if args.command == "check-config":
            return _check_config(args.config)
        if args.command == "inspect":
            return _inspect(args.inputs, sys.stdout, args.config)
        if args.command == "trajectories":
            return _trajectories(args.inputs, args.format, sys.stdout, args.config)
        if args.command == "agreement":
            return _agreement(args, sys.stdout)
        if args.compare:
            return _compare(args, sys.stdout)
        if args.since is not None and not args.compare:
            return _backfill(args, sys.stdout)
        return _grade(
            args.config,
            args.inputs,
            args.format,
            sys.stdout,
            args.failed_only,
            args.judge_sample,
            since=args.since,
            yes=args.yes,
        )
    except (ConfigError, InputError) as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1 (1 judges every run), not {text!r}")
    return rate


def _duration(text: str) -> float:
    from otelgrade.core.settings import parse_duration

    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive duration such as 24h, not {text!r}")
    return seconds


def _check_config(path: str) -> int:
    with deprecated_spellings() as deprecated:
        config = load_config(path)
    graders = sum(len(s.graders) for s in config.suites)
    print(f"{path}: ok ({len(config.suites)} suite(s), {graders} grader(s))")
    for suite in config.suites:
        for spec in suite.graders:
            print(f"  {suite.name}/{spec.name}  {spec.type}  version {spec.version}")
    for said in deprecated:
        print(f"warning: {said}")
    return EXIT_OK


def _mappings(config_path: str | None) -> tuple[Dialect, ...]:
    """The config's `rebuild.mappings` as dialects (none without a config)."""
    return mapped_dialects(load_config(config_path).rebuild.mappings) if config_path else ()


def _inspect(inputs: Sequence[str], out: TextIO, config_path: str | None = None) -> int:
    from otelgrade.rebuild.explain import explain_trace
    from otelgrade.tools.offline import read_spans

    traces = read_spans(inputs)
    if not traces:
        raise InputError(f"no spans found in {' '.join(inputs)}")
    for trace_id, (spans, logs) in traces.items():
        runs, readings = explain_trace(spans, logs, _mappings(config_path))
        out.write(f"trace {trace_id}: {len(spans)} span(s), {len(runs)} run(s)\n")
        for r in readings:
            dialect = f"[{r.dialect}] " if r.dialect else ""
            out.write(f"  {'  ' * r.depth}{r.name or r.span_id!r} {dialect}-> {r.role}: {r.why}\n")
        for run in runs:
            _describe_run(run, out)
    return EXIT_OK


_ONE_WITNESS = {
    "request": "only the model's request shows it (no execution, no result)",
    "execution": "only its execution shows it (no model asked for it)",
}


_DECIDED_BY = {
    "dialect": " (decided by: a span states it)",
    "nested_invocation": " (decided by: the agent ran inside the call)",
    "agent_acted": " (decided by: the agent it hands to acted during or right after it)",
    "name_hint": " (decided by: the framework's name for a transfer, nothing in the trace said otherwise)",
}


def _describe_run(run: Trajectory, out: TextIO) -> None:
    """What `inspect` says of a run beyond its spans: what it is, handoffs, and what could not be read."""
    kind = "request" if run.parent_span_id is None else f"nested in {run.parent_span_id}"
    agents = f", agents {', '.join(run.agents)}" if run.agents else ""
    out.write(f"run {run.span_id} {run.agent_name or '-'} ({kind}{agents})\n")
    for handoff in run.handoffs:
        why = _DECIDED_BY.get(handoff.decided_by or "", "")
        out.write(f"  handoff at step {handoff.step}: {handoff.from_agent} -> {handoff.to_agent}{why}\n")
    for unread in run.unread:
        out.write(f"  not understood: {unread.describe()}\n")
    for call in run.tool_calls:
        if witness := run.one_witness(call):
            out.write(f"  tool call `{call.name}` at step {call.step}: {_ONE_WITNESS[witness]}\n")
    for disagreement in run.disagreements:
        out.write(f"  witnesses disagree: {disagreement.describe()} (lacks {', '.join(disagreement.lacks)})\n")
    if run.lacks:
        out.write(f"  lacks: {', '.join(run.lacks)}\n")


def _trajectories(inputs: Sequence[str], fmt: str, out: TextIO, config_path: str | None = None) -> int:
    from otelgrade.tools.offline import read_inputs

    count = 0
    for trajectory in read_inputs(inputs, _mappings(config_path)):
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
            if trajectory.lacks:
                out.write(
                    f"  not in the trace: {', '.join(trajectory.lacks)} (graders that need them answer skipped)\n"
                )
            for disagreement in trajectory.disagreements:
                out.write(f"  witnesses disagree: {disagreement.describe()}\n")
    if count == 0:
        raise InputError(f"no agent runs found in {' '.join(inputs)}")
    return EXIT_OK


def _runs(config: Config, inputs: Sequence[str], since: float | None = None) -> list[Trajectory]:
    """The runs in the inputs, as the config's span mappings read them (with `since`: those that ended within it,
    and, for conversation suites, every other turn of the conversations they are turns of)."""
    from otelgrade.pipeline import TraceReader
    from otelgrade.tools.backfill import since as ended_since
    from otelgrade.tools.offline import read_runs

    cutoff = None if since is None else time.time() - since
    whole_conversations = any(suite.level == "conversation" for suite in config.suites)
    runs = list(read_runs(inputs, TraceReader.of(config), None if whole_conversations else cutoff))
    if cutoff is not None:
        runs = _with_whole_conversations(config, ended_since(runs, cutoff), runs, f"the last {since:g}s")
    if not runs:
        within = "" if since is None else f" that ended within the last {since:g}s"
        raise InputError(f"no agent runs{within} found in {' '.join(inputs)}")
    return runs


def _with_whole_conversations(
    config: Config, chosen: list[Trajectory], every: list[Trajectory], what: str
) -> list[Trajectory]:
    """With conversation suites, `chosen` and the other turns of their conversations (said on stderr): a
    conversation is graded from all its turns, never from those `what` happened to touch."""
    from otelgrade.grade.conversations import whole

    if not any(suite.level == "conversation" for suite in config.suites):
        return chosen
    runs, added = whole(chosen, every)
    _say_turns_added(added, what)
    return runs


def _say_turns_added(added: int, what: str) -> None:
    if added:
        print(
            f"otelgrade: {added} run(s) outside {what} added: the other turns of the conversations it touches "
            "(run suites grade them too)",
            file=sys.stderr,
        )


def _confirm_judges(
    configs: Sequence[tuple[Config, str]], runs: Iterable[Trajectory], judge_sample: float | None, yes: bool
) -> None:
    """Print what the judges would cost on these runs and, at a terminal, ask before spending it (`--yes`: do not
    ask). Without a terminal (a CI job grading with judges, as before versions were estimated) the estimate is
    printed and the judges are asked: refusing there would turn every existing CI gate with a judge into exit 2."""
    from otelgrade.tools.backfill import describe, estimate, total_usd

    costs = []
    for config, label in configs:
        found = estimate(config, runs, judge_sample)
        if found:
            print(describe(found, label), file=sys.stderr)
        costs.extend(found)
    calls = sum(c.calls for c in costs)
    if not calls or yes or not sys.stdin.isatty():
        return
    spend = f"{calls} judge call(s), {total_usd(costs)}"
    print(f"Spend {spend}? [y/N] ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InputError("not confirmed: no judge was asked")


def _grade(
    config_path: str | None,
    inputs: Sequence[str],
    fmt: str,
    out: TextIO,
    failed_only: bool = False,
    judge_sample: float | None = None,
    since: float | None = None,
    yes: bool = False,
) -> int:
    config = load_config(config_path)
    trajectories = _runs(config, inputs, since)
    _confirm_judges([(config, "")], trajectories, judge_sample, yes)
    runs = asyncio.run(_grade_all(config, trajectories, judge_sample))
    grades = [g for _, run_grades in runs for g in run_grades]
    if not grades:
        raise InputError(_nothing_matched(config, trajectories))
    if fmt == "json":
        for g in grades:
            if g.outcome in FAILING or not failed_only:
                out.write(json.dumps(g.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_report(runs, out, failed_only, shutil.get_terminal_size((100, 24)).columns)
    return EXIT_FAILED if any(g.outcome in FAILING for g in grades) else EXIT_OK


def _backfill(args: argparse.Namespace, out: TextIO) -> int:
    """`grade --since`: the runs read, graded and printed one trace at a time (memory is one trace's spans and the
    runs of open conversations, not the archive); damaged files are skipped, then named and counted at the end
    (exit 2 for them with `--strict`)."""
    from otelgrade.pipeline import Pipeline, TraceReader
    from otelgrade.tools.backfill import ended_after
    from otelgrade.tools.stream import Damage, stream_runs

    config = load_config(args.config)
    cutoff = time.time() - args.since
    damage = Damage()
    whole_conversations = any(suite.level == "conversation" for suite in config.suites)

    def runs() -> Iterator[Trajectory]:
        """The runs that ended within the window; with conversation suites, then the other turns of the
        conversations those runs are turns of (held aside while reading: turns only, never spans), so a
        conversation is graded from all its turns, never from those the window happened to cut."""
        outside: dict[str, list[Trajectory]] = {}
        touched: set[str] = set()
        for run in stream_runs(args.inputs, TraceReader.of(config), damage, None if whole_conversations else cutoff):
            key = run.conversation_key if whole_conversations and run.parent_span_id is None else None
            if ended_after(run, cutoff):
                if key is not None:
                    touched.add(key)
                yield run
            elif key is not None:
                outside.setdefault(key, []).append(run)
        added = [run for key in touched for run in outside.get(key, ())]
        _say_turns_added(len(added), f"the last {args.since:g}s")
        yield from added

    if Pipeline(config, Metrics(), sinks=()).grading.judge_graders():  # the estimate reads the archive once more
        _confirm_judges([(config, "")], runs(), args.judge_sample, args.yes)
        damage.files.clear()
    columns = shutil.get_terminal_size((100, 24)).columns
    totals, unmatched = Totals(), list[Trajectory]()

    def show(trajectory: Trajectory, grades: list[Grade]) -> None:
        totals.add(trajectory, grades)
        if not grades and not totals.outcomes:  # kept, briefly, to say why nothing matched if nothing does
            unmatched.append(Trajectory.model_construct(**trajectory.model_dump(include=_NAMING)))
        elif totals.outcomes:
            unmatched.clear()
        if args.format != "json":
            _print_run(trajectory, grades, out, args.failed_only, columns)
            return
        for g in grades:
            if g.outcome in FAILING or not args.failed_only:
                out.write(json.dumps(g.to_dict(), ensure_ascii=False) + "\n")

    asyncio.run(_grade_each(config, runs(), args.judge_sample, show))
    if damage.files:
        print(
            f"otelgrade: {len(damage.files)} damaged input file(s) skipped in part:\n{damage.report()}", file=sys.stderr
        )
    if not totals.runs:
        raise InputError(f"no agent runs that ended within the last {args.since:g}s found in {' '.join(args.inputs)}")
    if not totals.outcomes:
        raise InputError(_nothing_matched(config, unmatched))
    if args.format != "json":
        _print_summary(totals, out)
    if damage.files and args.strict:
        return EXIT_BAD_INPUT
    return EXIT_FAILED if totals.count(*FAILING) else EXIT_OK


_NAMING = {"trace_id", "span_id", "service_name", "agent_name", "conversation_id"}


async def _grade_each(
    config: Config,
    trajectories: Iterable[Trajectory],
    judge_sample: float | None,
    show: Callable[[Trajectory, list[Grade]], None],
) -> None:
    """Grade runs one by one as the server would, judges' answers awaited, each shown as soon as graded and then
    let go (only the request runs of conversations are kept, for `level: conversation` suites at the end)."""
    from otelgrade.pipeline import Pipeline

    pipeline = Pipeline(config, Metrics(), sinks=())
    judges = await pipeline.start_judges(judge_sample)
    whole = pipeline.grading.grades_conversations()
    turns = []
    try:
        for trajectory in trajectories:
            show(trajectory, await pipeline.grade_and_wait(trajectory))
            if whole and trajectory.parent_span_id is None and trajectory.conversation_id is not None:
                turns.append(trajectory)
        for conversation, grades in await pipeline.grading.grade_conversations_and_wait(turns):
            show(conversation, grades)
    finally:
        await judges.close()


def _compare(args: argparse.Namespace, out: TextIO) -> int:
    """`grade --compare OLD NEW`: exit 0 when no verdict flipped, 1 when some did."""
    from otelgrade.tools.compare import compare, describe_comparison

    old, new = load_config(args.compare[0]), load_config(args.compare[1])
    runs = _runs(new, args.inputs, args.since)
    _confirm_judges([(old, f" of {old.source}"), (new, f" of {new.source}")], runs, args.judge_sample, args.yes)
    answers: dict[str, tuple[str | None, list[tuple[str, str]]]] = {}  # a judge asked the same answers once
    before = [g for _, gs in asyncio.run(_grade_all(old, runs, args.judge_sample, answers)) for g in gs]
    after = [g for _, gs in asyncio.run(_grade_all(new, runs, args.judge_sample, answers)) for g in gs]
    if not before and not after:
        raise InputError(_nothing_matched(new, runs))
    comparison = compare(before, after)
    if args.format == "json":
        for grader in comparison.graders:
            out.write(json.dumps(grader.to_dict(), ensure_ascii=False) + "\n")
        for name in comparison.only_old:
            out.write(json.dumps({"grader": name, "only_in": "old"}) + "\n")
        for name in comparison.only_new:
            out.write(json.dumps({"grader": name, "only_in": "new"}) + "\n")
    else:
        out.write(describe_comparison(comparison) + "\n")
    return EXIT_FAILED if comparison.flipped else EXIT_OK


def _agreement(args: argparse.Namespace, out: TextIO) -> int:
    """`agreement --human FILE`: each grader's accuracy and Cohen's kappa against people's verdicts."""
    from otelgrade.tools.compare import agreement, describe_agreement, read_human_verdicts

    humans = read_human_verdicts(args.human)
    config = load_config(args.config)
    graders = {n for suite in config.suites for spec in suite.graders for n in (spec.name, f"{suite.name}/{spec.name}")}
    if unknown := sorted({h.grader for h in humans} - graders):
        named = ", ".join(sorted(n for n in graders if "/" not in n)) or "none"
        if len(unknown) == len({h.grader for h in humans}):
            raise InputError(f"{args.human} names no grader of {config.source}: {', '.join(unknown)} (it has {named})")
        print(
            f"otelgrade: {args.human} names graders {config.source} does not have, left out: "
            f"{', '.join(unknown)} (it has {named})",
            file=sys.stderr,
        )
    wanted = {h.trace_id for h in humans}
    every = _runs(config, args.inputs)
    runs = [run for run in every if run.trace_id in wanted]
    runs = _with_whole_conversations(config, runs, every, f"the runs {args.human} labels")
    if not runs:
        raise InputError(f"none of the {len(wanted)} trace id(s) in {args.human} is in {' '.join(args.inputs)}")
    if missing := wanted - {run.trace_id for run in every}:
        print(
            f"otelgrade: {len(missing)} of the {len(wanted)} trace id(s) in {args.human} are in no input, such as "
            f"{min(missing)}: their verdicts are counted as not judged",
            file=sys.stderr,
        )
    humans = [h for h in humans if h.grader in graders]
    _confirm_judges([(config, "")], runs, 1.0, args.yes)
    grades = [g for _, gs in asyncio.run(_grade_all(config, runs, 1.0)) for g in gs]
    results = agreement(humans, grades)
    if args.format == "json":
        for result in results:
            out.write(json.dumps(result.to_dict()) + "\n")
    else:
        out.write(describe_agreement(results) + "\n")
    return EXIT_OK


def _nothing_matched(config: Config, trajectories: list[Trajectory]) -> str:
    """Why nothing was graded: what the runs look like, beside what each suite takes."""

    def seen(names: Counter[str]) -> str:
        shown = ", ".join(f"{name} ({count})" for name, count in names.most_common(10))
        return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")

    services = Counter(t.service_name or "(none)" for t in trajectories)
    agents = Counter(t.agent_name or "(none)" for t in trajectories)
    suites = "".join(f"\n    {s.name}: {json.dumps(s.match, ensure_ascii=False)}" for s in config.suites)
    whole = [s.name for s in config.suites if s.level == "conversation"]
    if whole and len(whole) == len(config.suites) and not any(t.conversation_id for t in trajectories):
        return (
            f"the suites grade whole conversations ({', '.join(whole)}), but none of the {len(trajectories)} run(s) "
            "names a conversation, so nothing was graded\n"
            f"  a run's conversation id is read from {', '.join(CONVERSATION_ID_ATTRIBUTES[:3])}, ... (README, Whole "
            "conversations) on its spans, their ancestors or the resource\n"
            f"  name the attribute your application sets in `conversations.id_attributes` in {config.source}"
        )
    return (
        f"no suite matched any of the {len(trajectories)} run(s), so nothing was graded\n"
        f"  the runs have\n    service.name: {seen(services)}\n    agent_name: {seen(agents)}\n"
        f"  the suites match{suites or ' nothing: the config has no suites'}\n"
        f"  fix the suites' `match` in {config.source} (a suite without `match` grades every run)"
    )


async def _grade_all(
    config: Config,
    trajectories: list[Trajectory],
    judge_sample: float | None = None,
    answers: dict[str, tuple[str | None, list[tuple[str, str]]]] | None = None,
) -> list[tuple[Trajectory, list[Grade]]]:
    """Grade every run as the server would, with judges' answers awaited; then, at the end of the input, every
    conversation the runs form (for `level: conversation` suites). The report is the output: no sink is written."""
    from otelgrade.pipeline import Pipeline

    pipeline = Pipeline(config, Metrics(), sinks=())
    judges = await pipeline.start_judges(judge_sample, answers)
    try:
        return await pipeline.grade_all(trajectories)
    finally:
        await judges.close()


def _print_report(runs: list[tuple[Trajectory, list[Grade]]], out: TextIO, failed_only: bool, columns: int) -> None:
    """A table per run (only failing grades with `failed_only`), rationales in full, then pass rates of all."""
    totals = Totals()
    for trajectory, all_grades in runs:
        _print_run(trajectory, all_grades, out, failed_only, columns)
        totals.add(trajectory, all_grades)
    _print_summary(totals, out)


def _print_run(trajectory: Trajectory, all_grades: list[Grade], out: TextIO, failed_only: bool, columns: int) -> None:
    """One run's table (only failing grades with `failed_only`), rationales in full."""
    marks = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skipped": "SKIP"}
    grades = [g for g in all_grades if g.outcome in FAILING] if failed_only else all_grades
    if not failed_only or grades:
        if isinstance(trajectory, Conversation):
            out.write(
                f"conversation {trajectory.conversation_id}  {trajectory.turns} turn(s), the last "
                f"{trajectory.trace_id}/{trajectory.span_id}  agent={trajectory.agent_name or '-'}\n"
            )
        else:
            out.write(
                f"run {trajectory.trace_id}/{trajectory.span_id}  agent={trajectory.agent_name or '-'}  "
                f"status={trajectory.status}\n"
            )
        if not grades:
            out.write("    (no suite matched this run)\n")
        width = max((len(f"{g.suite}/{g.grader}") for g in grades), default=0)
        for g in grades:
            score = "-" if g.score is None else f"{g.score:.2f}"
            prefix = f"    {marks[g.outcome]:<5} {f'{g.suite}/{g.grader}':<{width}}  {score:>5}  "
            out.write(_wrapped(prefix, g.rationale or "-", columns) + "\n")


@dataclass
class Totals:
    """What the report's summary counts, run by run."""

    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (suite/grader, outcome)
    runs: int = 0
    conversations: int = 0

    def add(self, trajectory: Trajectory, grades: list[Grade]) -> None:
        if isinstance(trajectory, Conversation):
            self.conversations += 1
        else:
            self.runs += 1
        for g in grades:
            self.outcomes[(f"{g.suite}/{g.grader}", g.outcome)] += 1

    def count(self, *outcomes: str) -> int:
        return sum(n for (_, outcome), n in self.outcomes.items() if outcome in outcomes)


def _print_summary(totals: Totals, out: TextIO) -> None:
    """Pass rates of every grader, then the counts."""
    out.write("\nsummary (pass rate = pass / (pass + fail); errors and skips are not failures)\n")
    names = sorted({name for name, _ in totals.outcomes})
    width = max((len(n) for n in names), default=0)
    for name in names:
        p, f, e, s = (totals.outcomes[(name, o)] for o in ("pass", "fail", "error", "skipped"))
        rate = f"{p / (p + f):6.1%}" if p + f else "     -"
        out.write(f"  {name:<{width}}  {rate}  pass={p} fail={f} error={e} skipped={s}\n")
    grades, failed, errored = totals.count(*OUTCOMES), totals.count("fail"), totals.count("error")
    whole = totals.conversations
    counted = f"{totals.runs} run(s)" + (f", {whole} conversation(s)" if whole else "")
    out.write(f"\n{counted}, {grades} grade(s): {failed} failed, {errored} error(s)\n")


def _wrapped(prefix: str, text: str, columns: int) -> str:
    """`prefix`, then all of `text` wrapped to `columns` in the column after it (under the prefix, indented, when
    that column would be narrower than 40)."""
    if columns - len(prefix) < 40:
        prefix, first = " " * 8, prefix.rstrip() + "\n"
    else:
        first = ""
    room = max(columns - len(prefix), 40)
    lines = [line for paragraph in text.splitlines() for line in textwrap.wrap(paragraph, room, break_on_hyphens=False)]
    return first + prefix + f"\n{' ' * len(prefix)}".join(lines or ["-"])


def _short(text: str | None, limit: int = 100) -> str:
    if text is None:
        return "-"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":
    sys.exit(main())
