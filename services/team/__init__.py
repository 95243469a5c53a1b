"""Team notifications (docs/api.md §15): WeCom, Feishu and DingTalk group robots and e-mail, through the outbox.

    outbox.task_awaiting_review(settings.team, task, "created" | "reworked")  inside the write
    outbox.publish_ended(settings.team, task, job)  (a failed job)              inside the write
    outbox.feedback_received(settings.team, record)                            inside the write
    sender.jobs(settings)                                                      the scheduler's jobs

Modules: outbox (what is written), messages (what the team reads, every outside value inert), words
(its words, from the pages' catalogue), channels (each robot's request shape and signing, SMTP; the
HTTP attempt's deadline is services/outbound.py's), sender (claim, fold, rate, send, retry, count).
Settings: services/settings/declaration.py (declared), services/settings/team.py (typed).
"""
