"""Operations a self-hosting team runs: backup and restore (CONTRACT §11)."""
