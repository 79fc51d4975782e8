"""The What-if page (app/views/whatif.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import whatif

whatif.render()
