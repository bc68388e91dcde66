"""Self-host or API: the app's frame. Page config, the shared sidebar of inputs, and navigation.

Run with ``streamlit run app.py``. Every page reads the one scenario that ``pages/_ui`` keeps
in step with the address bar.
"""

import streamlit as st

from pages import _ui as ui

page = ui.navigation()
# Each page its own browser title; the icon is a file served with the app (no font fetched from elsewhere).
st.set_page_config(page_title=f"{page.title} · Self-host or API", page_icon=ui.FAVICON, layout="wide")
ui.frame(page)
page.run()
# Reached only by a run that was not stopped: the values it drew are in the browser now.
ui.finished()
