"""Feedback subsystem: client intake (intake, ratelimit), attachments (attachments, checks), admin
reading and triage (queries, triage, csvexport). No Flask here; blueprints/feedback.py is the HTTP side."""
