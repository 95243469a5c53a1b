"""Team notifications (docs/api.md §15): WeCom, Feishu and DingTalk group robots and e-mail, through the outbox.

Modules: outbox (what is written, inside the write it reports), messages (what the team reads), words (its
words, from the pages' catalogue), channels (each robot's request shape and signing, SMTP), sender (claim,
fold, rate, send, retry, count). Settings: services/settings/team.py.
"""
