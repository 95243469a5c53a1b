"""The WeChat Official Account platform: its API client (client.py), the upload cache (uploads.py), the
checking and opening of signed pushes (pushes.py, WeCom's too) and the body images it accepts
(services/images/platform_format.py). Callers import services.platform.client."""
