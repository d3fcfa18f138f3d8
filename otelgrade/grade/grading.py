"""Grade runs: route each rebuilt run to its suites, call every grader, and hand the grades to export.

One loop serves the live server and the offline CLI. A judge's grade arrives later as a future: live, it is
exported when it resolves; offline, `grade_and_wait` also awaits it. Nothing else differs. A grader with a call
scope (`scope: tool_call` / `llm_call`) gives one grade per matching call, each with the call's span id.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from otelgrade.core.metrics import Metrics
from otelgrade.core.results import OUTCOMES, Grade, GradeResult, Level, Outcome
from otelgrade.core.settings import ConversationSettings
from otelgrade.core.trajectory import Conversation, Trajectory, conversation_key
from otelgrade.grade.conversations import Completed, Conversations, merge, revision_of
from otelgrade.grade.gathering import Deliver, Gathering
from otelgrade.grade.graders import GraderSpec
from otelgrade.grade.graders.base import AlertPolicy, is_judge
from otelgrade.grade.graders.scope import Scoped
from otelgrade.grade.graders.versions import grader_version
from otelgrade.grade.judges import DISABLED, JudgeClient
from otelgrade.grade.route import Predicate, match_filter
from otelgrade.grade.turn_records import TurnRefused, read_turn

log = logging.getLogger(__name__)

Export = Callable[[Sequence[Grade]], None]
UNMATCHED_KINDS = 20  # distinct (service, agent, source) the report on unmatched runs tells apart


@dataclass(frozen=True)
class SuiteGrader:
    """One configured grader of a suite, built: its spec, and what grades a run with it."""

    spec: GraderSpec
    grade: Scoped


@dataclass
class Suite:
    """A named set of graders applied to every run whose attributes `match` (one entry of `suites:`).

    As read from the config its graders are specs; `bind` builds them with the judges' client, as grading needs
    them (`bound`). The match predicate is made with the suite.
    """

    name: str
    match: dict[str, Any] = field(default_factory=dict)
    graders: list[GraderSpec] = field(default_factory=list)
    regrade: bool = False  # grade a run again when late spans reach it (within `assembly.regrade_traces`)
    level: Level = "run"  # `conversation`: grades whole conversations (`Conversation`), not each run
    shadow: bool = False  # graded and recorded, never paging: its graders' alert policy is `none`
    bound: tuple[SuiteGrader, ...] = field(default=(), compare=False, repr=False)
    accepts: Predicate = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.accepts = match_filter(self.match)

    @classmethod
    def build(
        cls,
        name: str,
        match: Mapping[str, Any],
        specs: Iterable[GraderSpec],
        judges: JudgeClient = DISABLED,
        regrade: bool = False,
        level: Level = "run",
        shadow: bool = False,
    ) -> Suite:
        """A suite with its graders built."""
        return cls(name, dict(match), list(specs), regrade, level, shadow).bind(judges)

    def bind(self, judges: JudgeClient = DISABLED) -> Suite:
        """The same suite with its graders built, judges asking through `judges`."""
        for spec in self.graders:
            spec.version = spec.version or grader_version(spec)
        return replace(self, bound=tuple(SuiteGrader(spec, spec.scoped(judges)) for spec in self.graders))

    def described(self) -> str:
        """`name {match}`, as a person would compare it with a run."""
        shown = ", ".join(f"{key}: {value!r}" for key, value in self.match.items())
        return f"{self.name} {{{shown}}}" if shown else f"{self.name} (every request)"


@dataclass(frozen=True)
class UnmatchedRuns:
    """What arrived and was not graded, since the service started: the request runs no suite matched (how many,
    and the commonest kinds as (service, agent, source, count), at most `UNMATCHED_KINDS` of them), the traces
    holding no agent or model call at all, and each suite's name and `match` as a person reads it."""

    runs: int
    kinds: tuple[tuple[str, str, str, int], ...]
    traces_without_run: int
    suites: tuple[tuple[str, str], ...]


class Grading:
    """Grades runs with the installed suites; `install` swaps them (a config reload) without losing anything."""

    def __init__(
        self,
        suites: Sequence[Suite],
        export: Export,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_run: Callable[[Trajectory], None] | None = None,
        remember: int = 10_000,
        conversations: ConversationSettings | None = None,
        on_graded: Deliver | None = None,
        gather_wait: float = 60.0,
    ) -> None:
        self.export = export
        # each graded run's grades together, once its judges answered or `gather_wait` passed (`tick`)
        self.gathering = Gathering(on_graded, gather_wait, clock) if on_graded is not None else None
        self.on_run = on_run  # sees every run that some suite grades, before its grades are exported
        self.metrics = metrics if metrics is not None else Metrics()
        self.clock, self.wall = clock, wall
        self.suites: tuple[Suite, ...] = ()
        self.remember = remember  # traces whose re-graded suites' outcomes are kept, to count what a re-grade changed
        self._outcomes: OrderedDict[str, dict[GradeKey, tuple[Outcome, int]]] = OrderedDict()
        self._outcomes_lock = threading.Lock()
        self._unmatched: Counter[tuple[str, str, str]] = Counter()  # (service, agent, source) since the last report
        self._unmatched_lock = threading.Lock()
        self._unmatched_since_start: Counter[tuple[str, str, str]] = Counter()  # the page's, never reset
        self._unmatched_total = 0
        self._traces_without_run = 0
        settings = conversations if conversations is not None else ConversationSettings()
        self.conversations = Conversations(settings, clock)  # held live; fed only while a suite grades conversations
        self.turn_router: Callable[[Trajectory], None] | None = None  # with replicas: where turns go to meet
        self.turn_secret: bytes | None = None  # with replicas: what signs the turn records this replica holds
        self._conversations_lock = threading.Lock()  # the holder is changed under it; conversations graded outside
        self._alert_policies: set[tuple[str, str, AlertPolicy]] = set()  # exported: (suite, grader, policy)
        self.install(suites)

    def install(self, suites: Sequence[Suite]) -> None:
        """Grade with these suites from now on (bound ones: see `Suite.bind`). Their series start at zero
        (`rate()` needs a sample before the first grade), in the environment `unknown` (new environments' series
        are started by the exporter)."""
        m = self.metrics
        unset = m.environment(None)
        m.grader_versions.clear()
        policies = {(s.name, grader, policy) for s in suites for grader, policy in alert_policies(s).items()}
        for labels in policies:
            m.grader_alert_policy.labels(*labels).set(1)
        for labels in self._alert_policies - policies:  # a grader the new config drops (or re-classes) stops paging
            m.grader_alert_policy.remove(*labels)
        self._alert_policies = policies
        for suite in suites:
            m.runs_graded.labels(suite.name, unset)
            for g in suite.bound:
                m.grader_versions.labels(suite.name, g.spec.name, g.spec.version).set(1)
                for outcome in OUTCOMES:
                    m.grades.labels(suite.name, g.spec.name, outcome, unset)
                if is_judge(g.grade.grader):
                    m.runs_eligible.labels(suite.name, g.spec.name, unset)
        self.suites = tuple(suites)

    def judge_graders(self) -> list[str]:
        """Names of the configured graders that are judges."""
        return [g.spec.name for s in self.suites for g in s.bound if is_judge(g.grade.grader)]

    def route(self, trajectory: Trajectory) -> list[Suite]:
        level = "conversation" if isinstance(trajectory, Conversation) else "run"
        return [suite for suite in self.suites if suite.level == level and suite.accepts(trajectory)]

    def grades_conversations(self) -> bool:
        """Whether some installed suite has `level: conversation`."""
        return any(suite.level == "conversation" for suite in self.suites)

    def grade(self, trajectory: Trajectory, again: bool = False) -> tuple[list[Grade], list[Future[Grade]]]:
        """Every grader of every suite the run matches (`again`: a re-grade after late spans, only the suites that
        re-grade, the run not counted again). Grades that are ready are exported now; the others (judges) are
        exported when their future resolves, and returned for whoever wants to wait."""
        m = self.metrics
        whole = isinstance(trajectory, Conversation)
        labels = m.run_labels(trajectory.service_name, trajectory.agent_name) if not again else ("", "")
        if not again and not whole:
            m.runs.labels(*labels).inc()
        ready: list[Grade] = []
        pending: list[Future[Grade]] = []
        awaited: list[str] = []  # whose the pending grades are: suite/grader
        suites = [suite for suite in self.route(trajectory) if suite.regrade or not again or whole]
        if not suites and not again and not whole and trajectory.parent_span_id is None:
            self._note_unmatched(labels, trajectory.source)
        if suites and self.on_run is not None:
            self.on_run(trajectory)
        environment = m.environment(trajectory.environment)
        for suite in suites:
            if whole and not again:
                m.conversations_graded.labels(suite.name, environment).inc()
            elif not again:
                m.runs_graded.labels(suite.name, environment).inc()
            for g in suite.bound:
                if is_judge(g.grade.grader) and not again:  # sampled: every routed run counts, judged or not
                    m.runs_eligible.labels(suite.name, g.spec.name, environment).inc()
                for call_span_id, verdict in g.grade.verdicts(trajectory):  # one verdict per run, or per call
                    if isinstance(verdict, GradeResult):
                        ready.append(self._record(suite, g.spec, trajectory, verdict, call_span_id))
                    else:
                        pending.append(self._later(suite, g.spec, trajectory, verdict, call_span_id))
                        awaited.append(f"{suite.name}/{g.spec.name}")
        self.export(ready)
        if self.gathering is not None and suites:
            self.gathering.add(trajectory, ready, pending, awaited)
        return ready, pending

    def tick(self, now: float | None = None) -> None:
        """Hand on the graded runs whose judges have not answered within `gather_wait` (`now` = inf: all)."""
        if self.gathering is not None:
            self.gathering.expire(now)

    def next_tick(self) -> float | None:
        """When `tick` may next have a run to hand on (None: no run awaits a judge)."""
        return self.gathering.next_deadline() if self.gathering is not None else None

    # --- conversations -----------------------------------------------------------------------

    def hold_turn(self, run: Trajectory, routed: bool = False) -> list[Grade]:
        """The live path of conversations: hold a request run as a turn of its conversation (a run that names
        none is counted, no conversation suite can grade it), and grade what completes because of it (its own
        conversation at an end marker, older ones evicted for room). Returns the grades that are ready. With a
        `turn_router` (replicas), a run rebuilt here goes to the router instead; `routed` turns came from it."""
        if run.conversation_id is None:
            self.metrics.runs_without_conversation.inc()
            return []
        if self.turn_router is not None and not routed:
            self.turn_router(run)
            return []
        with self._conversations_lock:
            reopened = run.conversation_key in self.conversations.completed
            done = self.conversations.add(run)
        if reopened:
            self.metrics.conversations_reopened.inc()
        return self._grade_completed(done)

    def hold_routed(self, records: Sequence[tuple[str, str]]) -> list[Grade]:
        """Turn records the router sent this replica (each run's trajectory JSON and its signature), held as turns
        here when `read_turn` accepts them; the others are refused, counted and logged."""
        ready: list[Grade] = []
        refused: Counter[str] = Counter()
        for body, signed in records:
            try:
                run = read_turn(body, signed, self.turn_secret)
            except TurnRefused as exc:
                refused[str(exc)] += 1
                continue
            except ValueError as exc:
                self._invalid_turn(exc)
                continue
            ready.extend(self.hold_turn(run, routed=True))
        if refused:
            count = sum(refused.values())
            self.metrics.turn_records.labels("refused").inc(count)
            self.metrics.log_records_dropped.labels("turn_record_refused").inc(count)
            why = "; ".join(f"{n}x {reason}" for reason, n in refused.items())
            log.warning("%d turn record(s) refused: %s", count, why)
        return ready

    def hold_passed_on(self, body: bytes) -> list[Grade]:
        """A turn another grading worker of this process passed on (over its pipe, never from a receiver): held."""
        try:
            run = Trajectory.model_validate_json(body)
        except ValueError as exc:
            self._invalid_turn(exc)
            return []
        return self.hold_turn(run, routed=True)

    def _invalid_turn(self, problem: ValueError) -> None:
        self.metrics.log_records_dropped.labels("turn_record_invalid").inc()
        log.warning("a turn record is not a trajectory, dropped: %s", str(problem)[:200])

    def settle_conversations(self) -> list[Grade]:
        """Grade the conversations whose last run is `conversations.settle` old (the server calls it on its
        grading thread when `next_conversation_deadline` has passed)."""
        with self._conversations_lock:
            done = self.conversations.due()
        return self._grade_completed(done)

    def next_conversation_deadline(self) -> float | None:
        return self.conversations.next_deadline()

    def finish_conversations(self) -> list[Grade]:
        """Grade every open conversation as it stands (shutdown, or the end of offline input)."""
        with self._conversations_lock:
            done = self.conversations.drain()
        return self._grade_completed(done)

    def _grade_completed(self, done: Sequence[Completed]) -> list[Grade]:
        m = self.metrics
        if self.conversations.damaged:
            m.spool_damage.labels("journal").inc(self.conversations.damaged)
            self.conversations.damaged = 0
        ready: list[Grade] = []
        for completed in done:
            m.conversations_completed.labels(completed.reason).inc()
            ready.extend(self.grade(completed.conversation)[0])
        m.conversations_open.set(len(self.conversations.open))
        m.conversation_bytes.set(self.conversations.nbytes)
        return ready

    async def grade_conversations_and_wait(self, runs: Sequence[Trajectory]) -> list[tuple[Conversation, list[Grade]]]:
        """The offline path: the request runs of the input grouped by conversation (scope and id), each graded
        once, at the end of the input, with judges' answers awaited; numbered the revision the live service would
        have graded it as (a conversation that resumed after it settled is its revision 2)."""
        turns: dict[str, list[Trajectory]] = {}
        for run in runs:
            key = run.conversation_key
            if run.parent_span_id is None and key is not None:
                turns.setdefault(key, []).append(run)
        graded = []
        for its_runs in turns.values():
            conversation = merge(its_runs)
            self.metrics.conversations_completed.labels("ended" if conversation.ends_conversation else "settled").inc()
            grades = await self.grade_and_wait(conversation)
            revision = revision_of(its_runs, self.conversations.settings.settle)
            for grade in grades:
                grade.revision = revision if grade.level == "conversation" else grade.revision
            graded.append((conversation, grades))
        return graded

    def _note_unmatched(self, labels: tuple[str, ...], source: str) -> None:
        service, agent = labels
        self.metrics.runs_unmatched.labels(service, agent).inc()
        key = (service, agent, source)
        with self._unmatched_lock:
            self._unmatched_total += 1
            for seen in (self._unmatched, self._unmatched_since_start):
                if key in seen or len(seen) < UNMATCHED_KINDS:
                    seen[key] += 1

    def unmatched_runs(self) -> UnmatchedRuns:
        """What the grades page shows to explain runs that were not graded."""
        with self._unmatched_lock:
            kinds = tuple((s, a, src, n) for (s, a, src), n in self._unmatched_since_start.most_common())
            total, without_run = self._unmatched_total, self._traces_without_run
        suites = tuple((suite.name, suite.described().removeprefix(suite.name).strip()) for suite in self.suites)
        return UnmatchedRuns(total, kinds, without_run, suites)

    def unmatched_report(self) -> str | None:
        """What the requests that matched no suite since the last report looked like, beside each suite's `match`
        (None when every request matched one): the line that explains a silent suite."""
        with self._unmatched_lock:
            seen, self._unmatched = self._unmatched, Counter()
        if not seen:
            return None
        runs = ", ".join(f"service={s} agent={a} source={src} ({n}x)" for (s, a, src), n in seen.most_common(3))
        suites = "; ".join(suite.described() for suite in self.suites) or "none configured"
        return (
            f"{sum(seen.values())} request run(s) matched no suite, such as {runs}. The suites match: {suites}. "
            "`otelgrade grade --config FILE TRACE` explains offline why a run matched none"
        )

    def count_reading(self, runs: Sequence[Trajectory]) -> None:
        """What the rebuild of one trace could not read: a trace with no run, spans no dialect understood (per
        scope, once per request), tool calls only one witness shows, runs whose witnesses disagree (per reason)."""
        m = self.metrics
        if not runs:
            m.traces_without_run.inc()
            with self._unmatched_lock:
                self._traces_without_run += 1
        for run in runs:
            for reason in dict.fromkeys(d.reason for d in run.disagreements):
                m.runs_inconsistent.labels(reason).inc()
            if run.parent_span_id is not None:
                continue
            for unread in run.unread:
                m.spans_not_understood.labels(*m.scope_label(unread.scope)).inc(unread.spans)
            for call in run.tool_calls:
                if witness := run.one_witness(call):
                    m.tool_calls_one_witness.labels(witness).inc()

    async def grade_and_wait(self, trajectory: Trajectory) -> list[Grade]:
        """The offline path: the same grading, with judges' answers awaited."""
        ready, pending = self.grade(trajectory)
        return ready + list(await asyncio.gather(*(asyncio.wrap_future(f) for f in pending)))

    def _later(
        self, suite: Suite, spec: GraderSpec, trajectory: Trajectory, answer: Future[GradeResult], call_span: str | None
    ) -> Future[Grade]:
        graded: Future[Grade] = Future()

        def resolved(done: Future[GradeResult]) -> None:
            grade = self._record(suite, spec, trajectory, done.result(), call_span)
            self.export([grade])
            graded.set_result(grade)

        answer.add_done_callback(resolved)
        return graded

    def _record(
        self, suite: Suite, spec: GraderSpec, trajectory: Trajectory, result: GradeResult, call_span: str | None
    ) -> Grade:
        grade = Grade(
            trace_id=trajectory.trace_id,
            span_id=trajectory.span_id,
            suite=suite.name,
            grader=spec.name,
            score=result.score,
            passed=result.passed,
            outcome=result.outcome,
            rationale=result.rationale,
            grader_type=spec.type,
            agent_name=trajectory.agent_name,
            service_name=trajectory.service_name,
            environment=trajectory.environment,
            sample_rate=result.sample_rate,
            sampled=result.sampled,
            time_unix=self.wall(),
            metadata=dict(result.metadata),
            scope=spec.scope,
            call_span_id=call_span,
            version=spec.version,
            level=suite.level,
            shadow=suite.shadow,
            conversation_id=trajectory.conversation_id,
            conversation_scope=trajectory.conversation_scope,
        )
        if suite.regrade or suite.level == "conversation":
            self._revise(grade)
        return grade

    def _revise(self, grade: Grade) -> None:
        """Number a re-graded suite's grade: the next revision of the same grade of the run, counting what changed
        (`otelgrade_regrades_total`) and a grade that turned to fail (`otelgrade_regrade_failures_total`, which the
        guardrail alerts count), or 1 for a grade the run did not have before."""
        whole = grade.level == "conversation"  # the same grade of a conversation whichever run is its last
        key = ("" if whole else grade.span_id, grade.suite, grade.grader, grade.call_span_id)
        conversation = conversation_key(grade.conversation_scope, grade.conversation_id or "")
        owner = f"conversation:{conversation}" if whole else grade.trace_id
        with self._outcomes_lock:
            outcomes = self._outcomes.get(owner)
            if outcomes is None:
                outcomes = self._outcomes[owner] = {}
                while len(self._outcomes) > self.remember:
                    self._outcomes.popitem(last=False)
            before = outcomes.get(key)
            grade.revision = before[1] + 1 if before else 1
            outcomes[key] = (grade.outcome, grade.revision)
        if before is not None:
            self.metrics.regrades.labels(grade.suite, grade.grader, _change(before[0], grade.outcome)).inc()
            if grade.outcome == "fail" and before[0] != "fail":  # a new failure: it pages as a first one would
                environment = self.metrics.environment(grade.environment)
                failures = self.metrics.failures_on_regrade.labels(grade.level, grade.suite, grade.grader, environment)
                failures.inc(exemplar={"trace_id": grade.trace_id})


def alert_policies(suite: Suite) -> dict[str, AlertPolicy]:
    """How each grader of the suite pages (`otelgrade_grader_alert_policy`): its configured or default policy.
    The one place that decides it for a whole suite (a suite whose grades must not page sets `none` here)."""
    return {spec.name: "none" if suite.shadow else spec.alert_policy for spec in suite.graders}


def without_span_ground_truth(trajectory: Trajectory, allowed: bool) -> Trajectory:
    """The rebuilt run, without the ground truth its spans set unless `rebuild.ground_truth_from_spans` allows it."""
    if allowed or trajectory.ground_truth is None:
        return trajectory
    return trajectory.model_copy(update={"ground_truth": None})


GradeKey = tuple[str, str, str, str | None]  # run span id, suite, grader, call span id


def _change(before: Outcome, after: Outcome) -> str:
    if before == after:
        return "same"
    if (before, after) in (("pass", "fail"), ("fail", "pass")):
        return f"{before}_to_{after}"
    return "other"
