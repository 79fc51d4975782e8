"""The Calibration page (app/views/calibration.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import calibration

calibration.render()
