"""`python -m services.settings` prints the settings table README.md and docs/api.md carry."""

from services.settings import markdown_table

print(markdown_table(), end="")
