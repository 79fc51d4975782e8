"""One small script per page, each calling its ``app.views`` module's ``render()``."""
