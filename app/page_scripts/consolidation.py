"""The Consolidation page (app/views/consolidation.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import consolidation

consolidation.render()
