"""Self-host or API: the app's frame. Page config, the shared sidebar of inputs, and navigation.

Run with ``streamlit run app.py``. Every page reads the one scenario that ``pages/_ui.py`` keeps
in step with the address bar.
"""

import streamlit as st

from pages import _ui as ui

st.set_page_config(page_title="Self-host or API", page_icon=":material/calculate:", layout="wide")

page = ui.navigation()
ui.frame()
page.run()
