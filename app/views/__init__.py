"""The web app's pages; each module has ``render()``, which app/main.py puts in the navigation."""
