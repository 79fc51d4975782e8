"""The Plan page (app/views/plan.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import plan

plan.render()
