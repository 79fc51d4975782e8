"""The Compare page (app/views/compare.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import compare

compare.render()
