"""Readers' comments (docs/api.md §23): fetched for every live article, read by editors and the agent, answered
by editors from the agent's proposals."""
