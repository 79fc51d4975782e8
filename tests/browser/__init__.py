"""Helpers for the real-browser test of the web app (tests/test_app_browser.py)."""
