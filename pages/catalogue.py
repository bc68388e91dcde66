"""Models & cards: the catalogue behind the presets, with sources."""

import streamlit as st

from pages import _ui as ui

s, r = ui.page()
st.title("Models & cards")
