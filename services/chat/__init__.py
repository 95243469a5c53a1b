"""Deciding from the team's chat (docs/api.md §22): cards with the decision buttons, and their clicks."""
