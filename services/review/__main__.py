"""`python -m services.review > docs/review-states.md` writes the state document from the table."""

from services.review.state_machine import render_markdown

print(render_markdown(), end="")
