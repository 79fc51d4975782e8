"""The Load over time page (app/views/timeline.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import timeline

timeline.render()
