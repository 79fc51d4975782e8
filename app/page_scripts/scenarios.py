"""The Scenario library page (app/views/scenarios.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import scenarios

scenarios.render()
