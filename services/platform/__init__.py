"""Parts of the platform client (services/platform_client.py is the module callers import)."""
