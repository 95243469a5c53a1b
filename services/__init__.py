"""The domain (docs/conventions.md): what the service does, called by views, commands and workers."""
