"""Decision: self-host or API, for the traffic in the link."""

import streamlit as st

from pages import _ui as ui

s, r = ui.page()
st.title("Self-host or API?")
