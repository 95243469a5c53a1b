"""Operations a self-hosting team runs: backup and restore (docs/api.md §11), copying to another database."""
