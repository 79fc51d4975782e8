"""The Size page (app/views/size.py); a file so that st.navigation, st.switch_page and AppTest can address it."""

from app.views import size

size.render()
