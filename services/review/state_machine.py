"""THE review state machine: tables of (state, trigger) -> next state that code and docs read.

Code asks `rule_for` / `job_rule_for` / `live_rule_for` / `edition_rule_for` (409 invalid_state without a
row) and applies a task rule with `fire()` (services/live/outcomes.py move() for going live); the service
that fires evaluates the conditions that choose between triggers. docs/review-states.md is generated from
these tables: `python -m services.review > docs/review-states.md`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from services.errors import Conflict
from services.review.rulings import RULINGS
from services.review.timeline import add_event

ANY = "*"


@dataclass(frozen=True)
class Rule:
    state: str | None  # None: the task does not exist yet; ANY: every state
    trigger: str
    condition: str
    next_state: str | None  # None: the record is removed
    events: tuple[str, ...]
    effects: str


TABLE = (
    Rule(
        None,
        "create",
        "valid payload (POST /api/review/agent/tasks)",
        "pending_review",
        ("task_created",),
        "candidates stored unchanged; publishJobs empty",
    ),
    Rule(
        "pending_review",
        "agent_patch",
        "PATCH elements: any field of the content type",
        "pending_review",
        ("draft_saved",),
        "values into selections, body into bodyDraft; manualOverrides of patched keys cleared",
    ),
    Rule(
        "pending_review",
        "approve_and_publish",
        "complete, valid selections (decision rules 1-2, 6-9)",
        "approved",
        ("approved",),
        "selections, manualOverrides, bodyDraft saved with the claim of the publish job "
        "(auto_after_approval), which runs after commit",
    ),
    Rule(
        "pending_review",
        "approve_without_publish",
        "complete, valid selections (decision rules 1-2, 6-9)",
        "approved",
        ("approved",),
        "selections, manualOverrides, bodyDraft saved; no publish job",
    ),
    Rule(
        "pending_review",
        "reject_rework",
        "rejectionReason given; field-level: complete selections and lockedSelections covering every non-rejected key",
        "rejected_rework",
        ("rejected",),
        "rejectedElements, lockedSelections, reason and note saved; agent notified through the outbox",
    ),
    Rule(
        "rejected_rework",
        "rework_patch",
        "PATCH only keys in rejectedElements; some remain",
        "rejected_rework",
        ("rework_submitted",),
        "patched keys leave rejectedElements, values into selections",
    ),
    Rule(
        "rejected_rework",
        "rework_complete",
        "PATCH fixes the last rejected key; merged selections pass the approval checks",
        "pending_review",
        ("rework_submitted", "returned_to_review"),
        "rejectedElements and lockedSelections removed",
    ),
    Rule(
        "rejected_rework",
        "rework_whole_task",
        "whole-task rejection: first valid PATCH of any field",
        "pending_review",
        ("rework_submitted", "returned_to_review"),
        "values into selections; no completeness check; rejectedElements and lockedSelections removed",
    ),
    Rule(
        "approved",
        "publish",
        "manual publish (POST .../publish-jobs): a publishable snapshot of the selections; "
        "no live publish claim on the task",
        "approved",
        (),
        "a publish job (manual) is claimed; the platform calls follow after commit",
    ),
    Rule(
        "approved",
        "auto_publish",
        "approve_and_publish, in the approval's transaction",
        "approved",
        (),
        "the auto_after_approval job is claimed with the approval; a snapshot that cannot be built fails the job",
    ),
    Rule(
        "approved",
        "retry",
        "POST .../publish-jobs/:jobId/retry of a job of this task that JOB_TABLE lets retry; no live publish claim",
        "approved",
        (),
        "a new manual job publishes the failed job's snapshot (attemptCount + 1, retryOf)",
    ),
    Rule(
        "approved",
        "publish_succeeded",
        "publishable snapshot; the platform accepted the draft",
        "published",
        ("publish_succeeded",),
        "a succeeded job record is added",
    ),
    Rule(
        "approved",
        "publish_failed",
        "the publish attempt failed",
        "approved",
        ("publish_failed",),
        "a failed job record is added; retry needs the task still approved",
    ),
    Rule(
        ANY,
        "delete",
        "admin session (DELETE /api/review/tasks/:taskId); no live publish claim",
        None,
        (),
        "record, jobs, timeline and unsent notifications removed; local files cleaned best-effort",
    ),
)
# A publish job: "running" while its claim is held (stored as failed with "has not finished", so a
# crash leaves a failed job), then succeeded or failed for good; only a failed job is retried.
JOB_TABLE = (
    Rule(
        None,
        "start",
        "the task's publish, auto_publish or retry row allows it",
        "running",
        (),
        "the job and the task's publish claim are written in one transaction",
    ),
    Rule(
        "running",
        "finish_succeeded",
        "the platform accepted the draft",
        "succeeded",
        (),
        "draftMediaId stored; the task takes publish_succeeded (or only records its event if it moved on)",
    ),
    Rule(
        "running",
        "finish_failed",
        "an upload, the draft call or a check failed, or the service stopped during it (found at the next start)",
        "failed",
        (),
        "lastError stored; the task takes publish_failed",
    ),
    Rule(
        "running",
        "abandon",
        "no heartbeat within the stale limit when another publish takes the claim",
        "failed",
        (),
        "lastError says the outcome is unknown; a publish_failed event is recorded",
    ),
    Rule(
        "failed",
        "retry",
        "the job got as far as its snapshot",
        "failed",
        (),
        "the job stays; a new job starts from its snapshot",
    ),
)
# Going live (docs/api.md §18): a task's TaskLive row (the task stays `published`).
_SCHEDULE = "an admin asks (POST .../go-live): the task is published, its draft on the platform"
_RESULT = "publish_status from the platform's event or a poll"
LIVE_TABLE = (
    *(
        Rule(
            state,
            "schedule",
            _SCHEDULE,
            "scheduled",
            ("live_scheduled",),
            "draft, `at`, who asked; a last attempt's fields cleared",
        )
        for state in (None, "failed", "canceled")
    ),
    Rule("scheduled", "cancel", "an admin cancels (DELETE .../go-live)", "canceled", ("live_canceled",), "-"),
    Rule("scheduled", "submit", "`at` has come", "submitting", (), "owner stored, then one freepublish/submit"),
    Rule(
        "submitting",
        "submitted",
        "freepublish/submit answered",
        "publishing",
        ("live_submitted",),
        "publishId stored; polls after WECHAT_PUBLISH_POLL_DELAYS",
    ),
    Rule("submitting", "refused", "freepublish/submit refused, or not sent", "failed", ("live_failed",), "the reason"),
    Rule(
        "submitting",
        "interrupted",
        "its process stopped, or 10 minutes passed",
        "failed",
        ("live_failed",),
        "the reason: it may have been submitted",
    ),
    Rule("publishing", "poll", "its next poll is due", "publishing", (), "polls + 1, then freepublish/get"),
    Rule("publishing", "wait", "a poll said 1, 45009 or nothing", "publishing", (), "next poll after the next delay"),
    Rule("publishing", "published", f"{_RESULT}: 0", "live", ("live",), "articleId, articleUrl (the platform's only)"),
    Rule("publishing", "publish_failed", f"{_RESULT}: 2-6", "failed", ("live_failed",), "the status's meaning"),
    Rule("publishing", "no_result", "24 h after the submission", "failed", ("live_failed",), "the reason"),
    Rule("failed", "published", f"failed by no_result, then {_RESULT}: 0", "live", ("live",), "as from publishing"),
    Rule(
        "failed",
        "publish_failed",
        f"failed by no_result, then {_RESULT}: 2-6",
        "failed",
        ("live_failed",),
        "as from publishing",
    ),
    *(
        Rule(
            state,
            "mass_sent",
            "its edition was sent to followers (docs/api.md §21)",
            "live",
            ("edition_sent",),
            "via `mass_send`, editionId, its position's address; the agent told",
        )
        for state in (None, "failed", "canceled")
    ),
)
# Editions (docs/api.md §21): the day's articles sent to an account's followers as one message.
_SENT = "MASSSENDJOBFINISH `send success`, or message/mass/get `SEND_SUCCESS`"
EDITION_TABLE = (
    Rule(
        None,
        "propose",
        "1-8 articles of the account, published, not live or going live, in no other edition "
        "(POST /api/editions; the agent or an editor)",
        "draft",
        (),
        "taskIds in order",
    ),
    Rule("draft", "reorder", "the same rules (PATCH)", "draft", (), "taskIds; a previewed draft forgotten"),
    Rule(
        "draft",
        "preview",
        "an editor (POST .../preview)",
        "draft",
        (),
        "the combined draft made and sent to one WeChat ID",
    ),
    Rule("scheduled", "preview", "an editor (POST .../preview)", "scheduled", (), "as from draft"),
    Rule(
        "draft",
        "send",
        "an editor; the tasks still can go; the quota of its day or month not used up (POST .../send)",
        "scheduled",
        ("edition_scheduled",),
        "sendAt, tagId, ignoreReprint",
    ),
    Rule("scheduled", "cancel", "an editor (DELETE .../send)", "canceled", (), "-"),
    Rule(
        "scheduled",
        "failed",
        "`sendAt` has come, but a task went live alone or can no longer go in an edition (the rules of propose)",
        "failed",
        ("edition_failed",),
        "the reason naming the tasks (`tasks_changed`); nothing sent; the team told",
    ),
    Rule(
        "scheduled",
        "claim",
        "`sendAt` has come",
        "sending",
        (),
        "owner and a 10-minute lease; the combined draft made, then one sendall with clientmsgid = the edition's id",
    ),
    Rule(
        "sending",
        "repeat",
        "no msgId yet, and its sender stopped, its lease passed, or a minute after 45066 or no answer",
        "sending",
        (),
        "the same draft and clientmsgid (45065 names the first send)",
    ),
    Rule(
        "sending",
        "accepted",
        "sendall answered, or 45065",
        "sending",
        (),
        "msgId, msgDataId; polls after WECHAT_PUBLISH_POLL_DELAYS",
    ),
    Rule(
        "sending",
        "sent",
        _SENT,
        "sent",
        ("edition_sent",),
        "counts and addresses (the event's); each task live through it; the agent per task, the team once",
    ),
    Rule(
        "sending",
        "failed",
        "45028, 48001, another errcode, `send fail`, `err(N)`, DELETE, no result in 24 h; "
        "a repeat before any draft was recorded whose tasks changed",
        "failed",
        ("edition_failed",),
        "the reason; the team told",
    ),
    Rule("sent", "counted", "MASSSENDJOBFINISH after a poll found it sent", "sent", (), "counts and addresses"),
    *(
        Rule(state, "delete", "an editor (DELETE /api/editions/<id>)", None, (), "the tasks and the platform untouched")
        for state in ("draft", "canceled", "failed")
    ),
)
# Why a state takes no such trigger, for the 409 message (default: "the task is <state>").
WHY_NOT = {"published": "the task is already published"}
PATCH_TRIGGERS = ("agent_patch", "rework_patch", "rework_complete", "rework_whole_task")
DECISION_TRIGGERS = ("approve_and_publish", "approve_without_publish", "reject_rework")
_INDEX = {(rule.state, rule.trigger): rule for rule in TABLE}
_JOB_INDEX = {(rule.state, rule.trigger): rule for rule in JOB_TABLE}
_LIVE_INDEX = {(rule.state, rule.trigger): rule for rule in LIVE_TABLE}
_EDITION_INDEX = {(rule.state, rule.trigger): rule for rule in EDITION_TABLE}


def find_rule(state: str | None, trigger: str) -> Rule | None:
    """The rule for (state, trigger), or None."""
    return _INDEX.get((state, trigger)) or _INDEX.get((ANY, trigger))


def states_allowing(trigger: str) -> list[str | None]:
    return [rule.state for rule in TABLE if rule.trigger == trigger]


def rule_for(state: str | None, trigger: str) -> Rule:
    """The rule, or 409 invalid_state naming the states where `trigger` is allowed."""
    rule = find_rule(state, trigger)
    if rule is None:
        allowed = " or ".join(s for s in states_allowing(trigger) if s)
        why = WHY_NOT.get(state or "", f"the task is {state}")
        raise Conflict(
            f"{why}; {trigger} needs it {allowed}",
            {"status": [state], "allowedFrom": states_allowing(trigger)},
            code="invalid_state",
        )
    return rule


def job_state(job: Any) -> str:
    """A job's state in JOB_TABLE: "running" until it has finished, then its stored status."""
    return "running" if job.finished_at is None else job.status


def _table_rule(
    table: tuple[Rule, ...], index: dict[Any, Rule], state: str | None, trigger: str, what: str, field: str
) -> Rule:
    """The rule of `table` for (state, trigger), or 409 invalid_state naming the states that allow it."""
    rule = index.get((state, trigger))
    if rule is None:
        allowed = " or ".join(r.state for r in table if r.trigger == trigger and r.state)
        raise Conflict(
            f"{what} is {state or 'none'}; {trigger} needs it {allowed}",
            {field: [state or "none"]},
            code="invalid_state",
        )
    return rule


def job_rule_for(job: Any, trigger: str) -> Rule:
    """The JOB_TABLE rule for `job`, or 409 invalid_state."""
    state = job_state(job)
    return _table_rule(JOB_TABLE, _JOB_INDEX, state, trigger, f"job {job.job_id}", "jobStatus")


def find_live_rule(state: str | None, trigger: str) -> Rule | None:
    """The LIVE_TABLE rule for (state, trigger), or None."""
    return _LIVE_INDEX.get((state, trigger))


def live_rule_for(state: str | None, trigger: str) -> Rule:
    """The LIVE_TABLE rule for (state, trigger) (state None: no row yet), or 409 invalid_state."""
    return _table_rule(LIVE_TABLE, _LIVE_INDEX, state, trigger, "going live", "live.status")


def find_edition_rule(state: str | None, trigger: str) -> Rule | None:
    return _EDITION_INDEX.get((state, trigger))


def edition_rule_for(state: str | None, trigger: str) -> Rule:
    """The EDITION_TABLE rule for (state, trigger), or 409 invalid_state."""
    return _table_rule(EDITION_TABLE, _EDITION_INDEX, state, trigger, "the edition", "status")


def require_any(state: str, triggers: Iterable[str], what: str) -> None:
    """409 unless one of `triggers` is allowed from `state` (e.g. any PATCH trigger)."""
    if not any(find_rule(state, trigger) for trigger in triggers):
        allowed = sorted({s for t in triggers for s in states_allowing(t) if s})
        raise Conflict(
            f"{what} is not possible while the task is {state}; allowed in: {', '.join(allowed)}",
            {"status": [state], "allowedFrom": allowed},
            code="invalid_state",
        )


def fire(
    task: Any, trigger: str, actor: str, actor_name: str | None = None, data: dict[str, Any] | None = None
) -> Rule:
    """Move `task` along the table and write the rule's events; `data` maps event type -> data."""
    rule = rule_for(task.status, trigger)
    task.status = rule.next_state
    for event in rule.events:
        add_event(task, event, actor, actor_name, (data or {}).get(event))
    return rule


def _rows(table):
    for rule in table:
        state = "(none)" if rule.state is None else ("any" if rule.state == ANY else f"`{rule.state}`")
        target = "(record removed)" if rule.next_state is None else f"`{rule.next_state}`"
        events = ", ".join(f"`{e}`" for e in rule.events) or "-"
        yield f"| {state} | `{rule.trigger}` | {rule.condition} | {target} | {events} | {rule.effects} |"


_HEADER = ["| From | Trigger | Condition | To | Timeline events | Effects |", "|---|---|---|---|---|---|"]
# (heading, what it says first, rules) after the task's own table
SECTIONS = (
    ("Publish jobs", "Generated from `JOB_TABLE`; a job is `running` while its claim is held.", JOB_TABLE),
    (
        "Going live",
        "Generated from `LIVE_TABLE`: a task's way to readers (docs/api.md §18); the task stays "
        "`published`. A worker's result applies only to the row as it read it (compare-and-set); the scheduler "
        "claims `submit` and `poll` rows, one process each; `live` and `failed` are told to the agent and the team.",
        LIVE_TABLE,
    ),
    (
        "Editions",
        "Generated from `EDITION_TABLE`: the day's articles sent to an account's followers as one "
        "message (docs/api.md §21). Every worker result is compare-and-set on the edition's version; the scheduler "
        "claims `claim`, `repeat` and polls, one process each.",
        EDITION_TABLE,
    ),
)


def render_markdown() -> str:
    """docs/review-states.md, written from the tables."""
    lines = [
        "# Review task states",
        "",
        "Generated from `TABLE`, `JOB_TABLE` and `LIVE_TABLE` in `services/review/state_machine.py` by",
        "`python -m services.review > docs/review-states.md`; a test fails when they differ.",
        "The code runs from the same tables: a (state, trigger) pair without a row is 409 `invalid_state`.",
        "",
        *_HEADER,
        *_rows(TABLE),
    ]
    for heading, intro, table in SECTIONS:
        lines += ["", f"## {heading}", "", intro, "", *_HEADER, *_rows(table)]
    lines += ["", "## Rulings the code applies beyond docs/api.md", ""]
    lines += [f"- {text}" for text in RULINGS]
    return "\n".join(lines) + "\n"
