"""Helpers for the real-browser test of the web app (tests/app/test_app_browser.py)."""
