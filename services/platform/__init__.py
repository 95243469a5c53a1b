"""The WeChat Official Account platform: its API client (client.py), the upload cache (uploads.py) and
the body images it accepts (services/images/platform_format.py). Callers import services.platform.client."""
